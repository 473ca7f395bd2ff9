// Command costtable turns the output of "sframe-gen stats --json PATH..."
// (an object per file, then {"total": ...}) into the tables of
// docs/cost.md: what SFrame costs for all the files, by kind and by ABI,
// and the files where it costs most.
//
//	sframe-gen stats --json --dry-run /usr > usr.json
//	go run ./testdata/costtable < usr.json
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// counts are the fields of a file's object and of the totals used here.
type counts struct {
	File             string `json:"file"`
	Kind             string `json:"kind"`
	Files            int    `json:"files"`
	FileBytes        int64  `json:"file_bytes"`
	FDEs             int    `json:"fdes"`
	FREs             int    `json:"fres"`
	Unshared         int64  `json:"sframe_bytes_unshared"`
	SFrame           int64  `json:"sframe_bytes"`
	EHFrame          int64  `json:"eh_frame_bytes"`
	EHFrameHdr       int64  `json:"eh_frame_hdr_bytes"`
	CFIFunctions     int    `json:"cfi_functions"`
	CoveredFunctions int    `json:"covered_functions"`
	// Breakdown is the breakdown object: header, fde_index, ...
	Breakdown map[string]int64 `json:"breakdown"`
}

type total struct {
	counts
	FilesWithoutCFI int                `json:"files_without_cfi"`
	FilesSkipped    int                `json:"files_skipped"`
	FilesFailed     int                `json:"files_failed"`
	InstalledBytes  int64              `json:"installed_bytes"`
	ByKind          map[string]*counts `json:"by_kind"`
	ByABI           map[string]*counts `json:"by_abi"`
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "costtable:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	dec := json.NewDecoder(bufio.NewReader(in))
	var files []counts
	var tot *total
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return err
		}
		var t struct {
			Total *total `json:"total"`
		}
		if err := json.Unmarshal(raw, &t); err == nil && t.Total != nil {
			tot = t.Total
			continue
		}
		var c counts
		if err := json.Unmarshal(raw, &c); err != nil {
			return err
		}
		files = append(files, c)
	}
	if tot == nil {
		return errors.New("no total: give the output of sframe-gen stats --json with several PATHs or a directory")
	}
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "%d files described (%d without CFI, %d skipped, %d failed); ELF files and archives: %s\n\n",
		tot.Files, tot.FilesWithoutCFI, tot.FilesSkipped, tot.FilesFailed, mb(tot.InstalledBytes))
	fmt.Fprintln(w, "| files | count | bytes | .eh_frame + .eh_frame_hdr | GNU's form (--no-share-fres) | default |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	row(w, "all", &tot.counts, tot.InstalledBytes)
	for _, by := range []map[string]*counts{tot.ByKind, tot.ByABI} {
		keys := make([]string, 0, len(by))
		for k := range by {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			row(w, k, by[k], by[k].FileBytes)
		}
	}
	b := tot.Breakdown
	fmt.Fprintf(w, "\nThe default's %s: header %s, FDE index %s, FDE attributes %s, FRE start addresses %s, FRE info %s, data words %s, other %s; sharing saved %s, narrower FRE start addresses %s.\n",
		mb(tot.SFrame), pct(b["header"], tot.SFrame), pct(b["fde_index"], tot.SFrame), pct(b["fde_attributes"], tot.SFrame),
		pct(b["fre_start_addresses"], tot.SFrame), pct(b["fre_info"], tot.SFrame), pct(b["data_words"], tot.SFrame),
		pct(b["other"], tot.SFrame), mb(b["sharing_saved"]), mb(b["narrowing_saved"]))
	sort.SliceStable(files, func(i, j int) bool { return files[i].SFrame > files[j].SFrame })
	fmt.Fprintln(w, "\n| file | kind | size | .sframe | of .eh_frame + hdr | FDEs | FREs | FRE bytes per FDE |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, f := range files[:min(10, len(files))] {
		fb := f.Breakdown
		fres := fb["fde_attributes"] + fb["fre_start_addresses"] + fb["fre_info"] + fb["data_words"]
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d | %d | %.1f |\n", f.File, f.Kind, mb(f.FileBytes), mb(f.SFrame),
			ratio(f.SFrame, f.EHFrame+f.EHFrameHdr), f.FDEs, f.FREs, float64(fres)/float64(max(f.FDEs, 1)))
	}
	return w.Flush()
}

// row prints the sizes of c, files of size bytes.
func row(w io.Writer, name string, c *counts, size int64) {
	eh := c.EHFrame + c.EHFrameHdr
	fmt.Fprintf(w, "| %s | %d | %s | %s (%s) | %s: %s, %s | %s: %s, %s |\n", name, c.Files, mb(size),
		mb(eh), pct(eh, size), mb(c.Unshared), ratio(c.Unshared, eh), pct(c.Unshared, size),
		mb(c.SFrame), ratio(c.SFrame, eh), pct(c.SFrame, size))
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func pct(a, b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

func ratio(a, b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(a)/float64(b))
}
