// Command avx512-init is the /init of the initramfs .ci/avx512 boots in
// Bochs: a static Go program (CGO_ENABLED=0), so the initramfs needs no
// libc, shell or busybox.
//
// It mounts proc, sys and devtmpfs, then runs each line of /runs (a
// directory under /pkg to run in, a test binary and its arguments,
// separated by spaces) with the environment of /env (NAME=value lines),
// and prints a marker line with each exit status. The marker lines are
// what the host reads from the serial console:
//
//	gdnn-init: started
//	gdnn-init: exit amd64.test 0
//	gdnn-init: done
//
// Then it powers the machine off. Any error of its own is printed and
// also ends in a power off: the host then finds a marker missing.
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	fmt.Println("gdnn-init: started")
	if err := run(); err != nil {
		fmt.Println("gdnn-init: error:", err)
	} else {
		fmt.Println("gdnn-init: done")
	}
	syscall.Sync()
	// The serial port drains at 115200 baud; give the last lines time to
	// leave before the machine goes away.
	time.Sleep(time.Second)
	_ = syscall.Reboot(syscall.LINUX_REBOOT_CMD_POWER_OFF)
	select {} // /init must not exit: the kernel would panic
}

func run() error {
	for _, m := range []struct{ src, dir, fs string }{
		{"proc", "/proc", "proc"},
		{"sysfs", "/sys", "sysfs"},
		{"devtmpfs", "/dev", "devtmpfs"},
	} {
		if err := os.MkdirAll(m.dir, 0o755); err != nil {
			return err
		}
		if err := syscall.Mount(m.src, m.dir, m.fs, 0, ""); err != nil {
			return fmt.Errorf("mount %s: %w", m.dir, err)
		}
	}
	if err := os.MkdirAll("/tmp", 0o1777); err != nil {
		return err
	}
	env, err := lines("/env")
	if err != nil {
		return err
	}
	runs, err := lines("/runs")
	if err != nil {
		return err
	}
	for _, r := range runs {
		f := strings.Fields(r)
		if len(f) < 2 {
			return fmt.Errorf("/runs: line %q: want a directory and a binary", r)
		}
		dir, bin := filepath.Join("/pkg", f[0]), filepath.Join("/bin", f[1])
		fmt.Printf("gdnn-init: run %s in %s: %s\n", f[1], dir, strings.Join(f[2:], " "))
		cmd := exec.Command(bin, f[2:]...)
		cmd.Dir, cmd.Env = dir, env
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
		t0 := time.Now()
		status := 0
		if err := cmd.Run(); err != nil {
			status = -1
			if ee, ok := err.(*exec.ExitError); ok {
				status = ee.ExitCode()
			} else {
				fmt.Println("gdnn-init:", err)
			}
		}
		fmt.Printf("gdnn-init: exit %s %d (%.0fs)\n", f[1], status, time.Since(t0).Seconds())
	}
	return nil
}

// lines returns the non-empty lines of file.
func lines(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if l := strings.TrimSpace(s.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out, s.Err()
}
