package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
)

func TestRoomOfADirectoryOnDisk(t *testing.T) {
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type == tmpfsMagic {
		t.Skip("the test's temporary directory is on a tmpfs here")
	}
	free, what, err := room(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(st.Bavail) * st.Bsize; free < want/2 || free > 2*want || what != "free on its filesystem" {
		t.Fatalf("room(%s) = %d (%s), statfs says %d available", dir, free, what, want)
	}
}

// On a tmpfs the bound is the smaller of its free space and the memory the kernel can still give, which is what
// ran out when a broker of a harness under /dev/shm was killed.
func TestRoomOfATmpfsIsBoundByMemory(t *testing.T) {
	var st syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &st); err != nil || st.Type != tmpfsMagic {
		t.Skip("no tmpfs at /dev/shm")
	}
	free, what, err := room("/dev/shm")
	if err != nil {
		t.Fatal(err)
	}
	avail, err := memAvailable()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(what, "tmpfs: ") || free > int64(st.Bavail)*st.Bsize || free > avail+avail/10 {
		t.Fatalf("room(/dev/shm) = %d (%s); tmpfs free %d, MemAvailable %d", free, what, int64(st.Bavail)*st.Bsize, avail)
	}
}

// A run that fits starts at once; one that cannot fit is refused with the figures once the wait is over, rather
// than started to fill the brokers' filesystem.
func TestWaitRoomRefusesARunThatCannotFit(t *testing.T) {
	b := &bench{h: &harness{dir: t.TempDir()}}
	ctx := context.Background()
	if err := b.waitRoom(ctx, 1<<20, 0); err != nil {
		t.Fatalf("a 1 MB run: %v", err)
	}
	err := b.waitRoom(ctx, 1<<62, 0)
	if err == nil || !strings.Contains(err.Error(), "GB short") {
		t.Fatalf("a 4 EB run: got %v, want a refusal with the figures", err)
	}
}
