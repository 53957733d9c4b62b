// workload: the one program of the lab node's two small images (tests/cluster/node.sh).
//
//	workload pause            the pod sandbox's process: waits for SIGTERM or SIGINT, reaps
//	                          whatever it inherits (it is PID 1 of the sandbox)
//	workload sleep [SECONDS]  sleeps (for ever without SECONDS); exits 0 on SIGTERM
//	workload burn MILLICORES  keeps MILLICORES of CPU busy (1000 = one core), until SIGTERM
//	workload version          prints what it is
//
// Static (CGO_ENABLED=0), no dependencies, so an image is this file alone on an empty root.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: workload pause | sleep [SECONDS] | burn MILLICORES | version")
	os.Exit(2)
}

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		args = []string{"pause"}
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	switch args[0] {
	case "pause":
		reap := make(chan os.Signal, 8)
		signal.Notify(reap, syscall.SIGCHLD)
		for {
			select {
			case <-stop:
				os.Exit(0)
			case <-reap:
				for {
					var ws syscall.WaitStatus
					pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
					if pid <= 0 || err != nil {
						break
					}
				}
			}
		}
	case "sleep":
		var after <-chan time.Time
		if len(args) > 1 {
			s, err := strconv.ParseUint(args[1], 10, 32)
			if err != nil {
				usage()
			}
			after = time.After(time.Duration(s) * time.Second)
		}
		select {
		case <-stop:
		case <-after:
		}
	case "burn":
		if len(args) != 2 {
			usage()
		}
		m, err := strconv.ParseUint(args[1], 10, 32)
		if err != nil || m == 0 {
			usage()
		}
		burn(m, stop)
	case "version":
		fmt.Printf("kubectl-quota lab workload (%s)\n", runtime.Version())
	default:
		usage()
	}
}

// burn keeps `millicores` of CPU busy: whole cores spin all the time, the remainder spins that
// share of every 100 ms and sleeps the rest.
func burn(millicores uint64, stop <-chan os.Signal) {
	spin := func(share time.Duration) {
		for {
			start := time.Now()
			for time.Since(start) < share {
			}
			if rest := 100*time.Millisecond - share; rest > 0 {
				time.Sleep(rest)
			}
		}
	}
	for i := uint64(0); i < millicores/1000; i++ {
		go spin(100 * time.Millisecond)
	}
	if part := millicores % 1000; part > 0 {
		go spin(time.Duration(part) * 100 * time.Millisecond / 1000)
	}
	<-stop
}
