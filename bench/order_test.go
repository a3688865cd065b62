package main

import (
	"slices"
	"testing"
)

// Every row orders every system once, and with an even number of systems over as many repetitions each
// system runs right after each other exactly once.
func TestWilliamsRowsBalanceWhoRunsAfterWhom(t *testing.T) {
	for n := 1; n <= 6; n++ {
		after := map[[2]int]int{}
		for rep := range n {
			row := williamsRow(n, rep)
			sorted := slices.Sorted(slices.Values(row))
			for i, v := range sorted {
				if v != i {
					t.Fatalf("n=%d rep=%d: row %v is not an order of the %d systems", n, rep, row, n)
				}
			}
			for i := 1; i < n; i++ {
				after[[2]int{row[i-1], row[i]}]++
			}
		}
		if n%2 == 1 {
			continue
		}
		for a := range n {
			for b := range n {
				if a != b && after[[2]int{a, b}] != 1 {
					t.Errorf("n=%d: system %d ran right after system %d %d times, want once", n, b, a, after[[2]int{a, b}])
				}
			}
		}
	}
}
