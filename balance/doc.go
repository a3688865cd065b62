// Package balance plans moves of work by measured load. It is pure: a Balancer's Step is a function of the
// current assignment, the measured rates, the time given and the state earlier Steps left, with no I/O and no
// clock of its own, so its rules are tested by properties and benchmarked at any scale.
//
// A Balancer moves items between bins by their measured byte rates: partitions between the tasks of a source
// connector (connectors/planner), tasks between workers (tasks/). Below, "task" is the bin and "partition" the
// item. Each Step looks at every task's load (the sum of its partitions' rates) against the mean over the tasks
// and runs this state machine per task:
//
//	       load > Enter×mean                      held for Sustain
//	COOL ─────────────────────▶ HOT (since t) ─────────────────────▶ GIVER: may take part in a move
//	 ▲                            │                                   │
//	 └────── load < Exit×mean ────┴───────────────────────────────────┘
//
//	any task whose partitions changed (a move, or a new deal) ──▶ COOLING for Cooldown: not judged, no move
//
// Enter (1.5) above Exit (1.25) is the hysteresis: a rate that wobbles around 1.5× the mean neither starts nor
// stops the clock, and Sustain (a minute by default) must pass above Exit before anything moves. A task whose
// partitions do not all have a fresh rate from the task itself is unmeasured: it neither gives nor receives.
// Below MinMeanRate per task nothing moves at all: an idle connector has no load to balance.
//
// A move is one hand-over between a giver and the coolest receiver (a measured task below the mean, neither
// hot nor cooling): the giver's hottest partitions are exchanged one for one with the receiver's coldest ones,
// as long as each exchange lowers the larger of the two loads and pairs a partition with one less than 1/Enter
// as hot (so that noise between equal partitions never looks like a gain), and only within a class when the
// Balancer has one (tasks of the same connector, between workers); the move is made only if the giver's load
// falls by at least MinGain. Exchanging, never just moving, keeps every task's share even (±1), so later deals
// never undo a move, and the hot partitions end apart while cold ones are packed together. Each task takes part
// in at most one move per Step and then cools for Cooldown, so one interval sees at most one move per task, and
// its new rates are measured before it is judged again. A giver that is still hot after cooling goes on without
// waiting another Sustain, and a receiver that a move made hot inherits the giver's clock: the load it took had
// already been sustained.
//
// Why no ping-pong: a move keeps the two tasks' total and lowers their maximum by MinGain, so the sum of the
// squares of all loads strictly falls with every move while rates hold still; with constant rates the moves
// stop after finitely many. Only rates that really change, and stay changed past Exit for Sustain, start moves
// again. The price of the even share: one partition hotter than a task's fair share stays a straggler (it is
// never split), and a task holding one dominant partition cannot shed its cold ones.
package balance
