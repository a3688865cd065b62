// Package planner decides which task of a MirrorSourceConnector replicates which source partition. It is pure:
// functions of the partitions, the current assignment and the measured rates, with no Kafka, no clock of its
// own and no I/O, so that its rules are tested by properties and benchmarked at any scale.
//
// # The deal: even and grouped
//
// Order keeps the flat list tasks are dealt from round-robin (Tasks): the k-th partition goes to task k mod n,
// n = min(tasks.max, partitions), so every task gets an even share (±1) whatever the list says. Grouped, the
// partitions a refresh adds are arranged so that each topic lands on as few tasks as those shares allow
// (dealTopics); partitions already listed keep their positions, so a new or grown topic changes only the tasks
// that receive its partitions and never moves a partition that was placed before.
//
// # Moves by measured load
//
// Grouping keeps every task's clients small (a librdkafka client holds every partition of every topic it
// touches), but puts a hot topic inside one task's pipeline. Balancer (package balance, whose doc gives the state
// machine and its hysteresis) corrects that from the byte rates the tasks report for their partitions: a task
// that carries more than 1.5x the mean for a sustained minute exchanges its hottest partitions one for one for
// the coldest of the coolest task. Apply turns the exchanges into swaps of positions in Order's list, so every
// share stays even and a later deal keeps them.
package planner
