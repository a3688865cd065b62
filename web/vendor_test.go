package web

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"strings"
	"testing"
)

// TestVendoredFilesMatchTheirChecksums recomputes the sha256 of every embedded vendored file against
// static/vendor/VENDOR.txt, and requires every file there to be listed: what ships is what was pinned.
func TestVendoredFilesMatchTheirChecksums(t *testing.T) {
	list, err := staticFS.Open("static/vendor/VENDOR.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer list.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(list)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("VENDOR.txt line %q: want file package@version tarball-path sha256", line)
		}
		b, err := staticFS.ReadFile("static/vendor/" + f[0])
		if err != nil {
			t.Fatalf("%s (%s) is listed but not embedded: %v", f[0], f[1], err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != f[3] {
			t.Errorf("%s (%s %s): sha256 %s, VENDOR.txt says %s", f[0], f[1], f[2], got, f[3])
		}
		listed[f[0]] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	entries, err := fs.ReadDir(staticFS, "static/vendor")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n := e.Name()
		if n != "VENDOR.txt" && !strings.HasPrefix(n, "LICENSE") && !listed[n] {
			t.Errorf("static/vendor/%s is embedded but not pinned in VENDOR.txt", n)
		}
	}
}
