// Command runc-capfilter is an OCI runtime registered with dockerd on hosts
// whose capability bounding set lacks capabilities that privileged
// containers ask for (for example CAP_SYS_RESOURCE inside some VMs). It
// removes, from the spec runc is about to use, every capability the host
// cannot grant, then executes runc with the same arguments.
package main

import (
	"fmt"
	"os"
	"syscall"
)

func main() {
	if err := run(os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "runc-capfilter: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return fmt.Errorf("reading capability bounding set: %w", err)
	}
	bounding, err := parseCapBnd(string(status))
	if err != nil {
		return err
	}
	if target := specTarget(args[1:]); target.path != "" {
		if err := filterFile(target, bounding); err != nil {
			return err
		}
	}
	runc, err := findRunc(os.Getenv("LABCTL_RUNC"), os.Getenv("PATH"), args[0])
	if err != nil {
		return err
	}
	argv := append([]string{runc}, args[1:]...)
	if err := syscall.Exec(runc, argv, os.Environ()); err != nil {
		return fmt.Errorf("executing %s: %w", runc, err)
	}
	return nil
}
