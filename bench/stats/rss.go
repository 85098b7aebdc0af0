package stats

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// RSSMiB reads field (VmRSS, VmHWM) of /proc/self/status in MiB: 0 where
// there is no such file (not Linux).
func RSSMiB(field string) (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, err
			}
			return kb / 1024, nil
		}
	}
	return 0, sc.Err()
}

// ResetPeakRSS sets VmHWM back to the current RSS (Linux 4.0+: "5" to
// clear_refs); elsewhere it does nothing.
func ResetPeakRSS() error {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil && runtime.GOOS == "linux" {
		return err
	}
	return nil
}
