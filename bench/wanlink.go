package main

// The wan scenario's link: two TUN devices, one on the host and one in the scenario's network namespace, and
// this subcommand (`kmirror-bench wanlink`, a child process of the bench) moving every IP packet from one to
// the other after a fixed one-way delay. It stands in for netem, which the machines' kernels are built
// without (CONFIG_NET_SCH_NETEM is not set, and there are no modules): a packet-level delay line keeps TCP's
// own behaviour over the link (windows, slow start, socket buffers), which a delaying TCP proxy would not.
// The devices exist only while this process holds them open, so they vanish with it whatever happens.
//
// Control: one line on stdin, "delay 50ms", sets the one-way delay of both directions. The process prints
// "ready" on stdout once both devices exist.

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const (
	tunSetIff = 0x400454ca // TUNSETIFF
	iffTun    = 0x0001
	iffNoPI   = 0x1000
)

func setnsSyscall() uintptr {
	if runtime.GOARCH == "arm64" {
		return 268
	}
	return 308 // amd64
}

// openTun creates TUN device name (no packet information header) in the calling thread's network namespace.
func openTun(name string) (int, error) {
	fd, err := syscall.Open("/dev/net/tun", syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open /dev/net/tun: %w", err)
	}
	var req [40]byte // struct ifreq: name[16], flags short
	copy(req[:15], name)
	*(*uint16)(unsafe.Pointer(&req[16])) = iffTun | iffNoPI
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), tunSetIff, uintptr(unsafe.Pointer(&req[0]))); e != 0 {
		syscall.Close(fd)
		return -1, fmt.Errorf("TUNSETIFF %s: %w", name, e)
	}
	return fd, nil
}

// openTunInNS creates the device inside network namespace ns, on an OS thread that enters it and is never
// handed back to the Go scheduler (the goroutine ends locked, so the runtime retires the thread).
func openTunInNS(ns, name string) (int, error) {
	type res struct {
		fd  int
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread's namespace is changed for good
		nsfd, err := syscall.Open("/var/run/netns/"+ns, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			ch <- res{-1, fmt.Errorf("open namespace %s: %w", ns, err)}
			return
		}
		defer syscall.Close(nsfd)
		if _, _, e := syscall.Syscall(setnsSyscall(), uintptr(nsfd), 0x40000000 /* CLONE_NEWNET */, 0); e != 0 {
			ch <- res{-1, fmt.Errorf("setns %s: %w", ns, e)}
			return
		}
		fd, err := openTun(name)
		ch <- res{fd, err}
	}()
	r := <-ch
	return r.fd, r.err
}

type delayedPacket struct {
	due  time.Time
	data []byte
}

// wanlinkMain runs the delay line until SIGTERM or stdin closes.
func wanlinkMain(args []string) error {
	fs := flag.NewFlagSet("wanlink", flag.ContinueOnError)
	ns := fs.String("ns", wanNS, "network namespace of the far end")
	hostIf := fs.String("host-if", wanHostIf, "TUN device on the host")
	nsIf := fs.String("ns-if", wanNSIf, "TUN device in the namespace")
	mtu := fs.Int("mtu", 9000, "largest packet (the devices' MTU is set by the bench)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	hfd, err := openTun(*hostIf)
	if err != nil {
		return err
	}
	nfd, err := openTunInNS(*ns, *nsIf)
	if err != nil {
		return err
	}
	var delay atomic.Int64
	var dropped atomic.Int64
	errc := make(chan error, 4)
	pump := func(from, to int, dir string) {
		// The queue holds what is "on the wire": at 100 MB/s and 75 ms one way, ~7.5 MB, a thousand
		// 9000-byte packets. A full queue drops, like a router's.
		q := make(chan delayedPacket, 1<<16)
		go func() {
			for p := range q {
				if d := time.Until(p.due); d > 0 {
					time.Sleep(d)
				}
				if _, err := syscall.Write(to, p.data); err != nil && !errors.Is(err, syscall.EIO) {
					errc <- fmt.Errorf("%s: write: %w", dir, err)
					return
				}
			}
		}()
		buf := make([]byte, *mtu+64)
		for {
			n, err := syscall.Read(from, buf)
			if err != nil {
				if errors.Is(err, syscall.EINTR) {
					continue
				}
				errc <- fmt.Errorf("%s: read: %w", dir, err)
				return
			}
			p := delayedPacket{due: time.Now().Add(time.Duration(delay.Load())), data: append([]byte(nil), buf[:n]...)}
			select {
			case q <- p:
			default:
				dropped.Add(1)
			}
		}
	}
	go pump(hfd, nfd, "host->ns")
	go pump(nfd, hfd, "ns->host")
	fmt.Println("ready")

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 2 && f[0] == "delay" {
				d, err := time.ParseDuration(f[1])
				if err != nil {
					fmt.Fprintln(os.Stderr, "wanlink:", err)
					continue
				}
				delay.Store(int64(d))
				fmt.Fprintf(os.Stderr, "wanlink: one-way delay %s (dropped so far: %d)\n", d, dropped.Load())
			}
		}
		errc <- nil // stdin closed: the bench is gone
	}()
	select {
	case <-sig:
	case err = <-errc:
	}
	fmt.Fprintf(os.Stderr, "wanlink: stopping; %d packets dropped on full queues\n", dropped.Load())
	syscall.Close(hfd)
	syscall.Close(nfd)
	return err
}
