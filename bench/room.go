package main

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// roomWait is how long a run waits for room: the brokers delete a deleted topic's files file.delete.delay.ms
// (60 s) after the deletion, so the previous runs' copies are gone well within it.
const roomWait = 2 * time.Minute

// roomReserve is kept free beside a run's copy: the brokers, PostgreSQL, the system under test and the bench.
const roomReserve = 2 << 30

// tmpfsMagic is statfs's f_type of a tmpfs (linux/magic.h).
const tmpfsMagic = 0x01021994

// waitRoom waits until the harness's filesystem has room for a run that writes about need bytes to the target,
// and tells why not if it never has. Each run's copy stays on B until the broker deletes it a minute after the
// run, so runs back to back pile up: in a harness under /dev/shm, where files are memory, three 5 GB copies
// and the source left too little and the kernel killed broker A mid-run — a run that then failed as "not
// replicated after 5m0s", with the harness broken for every later run.
func (b *bench) waitRoom(ctx context.Context, need int64, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	logged := false
	for {
		free, what, err := room(b.h.dir)
		if err != nil {
			logf("cannot tell the harness's free space (%v); going on", err)
			return nil
		}
		if free >= need+roomReserve {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("not started: %w", ctx.Err())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not started: the run writes about %.1f GB to B and %s has %.1f GB (%s), %.1f GB short after %s; "+
				"use fewer -records or a harness on disk", gb(need), b.h.dir, gb(free), what, gb(need+roomReserve-free), wait)
		}
		if !logged {
			logf("%s has %.1f GB (%s) and the run needs about %.1f GB and %.1f GB to spare: "+
				"waiting up to %s for the brokers to delete earlier runs' topics",
				b.h.dir, gb(free), what, gb(need), gb(roomReserve), wait)
			logged = true
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// room returns the bytes a broker under dir can still write and what bounds them: the filesystem's free space,
// or for a tmpfs, whose files live in memory, the memory the kernel can still give (a tmpfs's own size is
// usually larger than that).
func room(dir string) (int64, string, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, "", fmt.Errorf("statfs %s: %w", dir, err)
	}
	free := int64(st.Bavail) * st.Bsize
	if st.Type != tmpfsMagic {
		return free, "free on its filesystem", nil
	}
	avail, err := memAvailable()
	if err != nil {
		return 0, "", err
	}
	if avail < free {
		return avail, "tmpfs: memory available", nil
	}
	return free, "tmpfs: free", nil
}

// memAvailable is /proc/meminfo's MemAvailable in bytes.
func memAvailable() (int64, error) {
	kb, err := kbFields("/proc/meminfo", "MemAvailable")
	if err != nil {
		return 0, err
	}
	n, ok := kb["MemAvailable"]
	if !ok {
		return 0, fmt.Errorf("/proc/meminfo has no MemAvailable")
	}
	return n << 10, nil
}

func gb(n int64) float64 { return float64(n) / 1e9 }
