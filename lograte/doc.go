// Package lograte keeps a failure that repeats from flooding the log.
//
// When PostgreSQL went away for 20 seconds, kmirror wrote between 800 and 1,700 identical warnings: every task,
// every heartbeat and every REST request reported the same refused connection, several times a second. The
// lines that mattered (when it started, what the error was, when it stopped) drowned in the copies, and a log
// shipper paid for each one.
//
// A [Limiter] writes the first occurrence of a failure at once, then at most one line per interval for the
// same key, and that line says how many occurrences it stands for ("repeated": n). When the failure stops, the
// caller says so with [Limiter.Resolved], which writes one line with the number of failures and how long they
// lasted, and forgets the key so that the next failure is reported at once again.
//
// A Limiter starts no goroutine: suppressed occurrences are reported by the next line for their key, never by
// a timer, so a failure that stops without Resolved leaves its last suppressed count unreported until it
// happens again. Memory is bounded: past a number of keys the least recently seen key is forgotten.
package lograte
