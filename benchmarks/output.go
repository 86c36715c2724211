package benchmarks

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// displayHeader names the columns of the terminal and markdown tables.
// Peak Sys is left to the CSV: the runtime rarely returns memory to the OS,
// so it only grows across cells.
var displayHeader = []string{"clip", "sampler", "noise", "steps", "samples/s", "peak heap MiB",
	"σ", "E‖e‖²", "ε", "δ", "accountant", "relation", "test acc", "note"}

// display formats one row for people: blanks for what was not measured.
func display(r Row) []string {
	if r.Err != "" && r.Samples == 0 {
		return []string{r.Clip, r.Sampler, r.Noise, "", "", mib(r.PeakHeapMiB), "", "", "", "", "", "", "", r.Err}
	}
	eps, acct, rel := "", "", ""
	if r.Accountant != "" {
		// ε of different neighbouring relations are not comparable.
		eps, acct, rel = fmt.Sprintf("%.4g", r.Epsilon), r.Accountant, r.Relation
		if r.NotPrivate {
			eps += NotPrivateMark
		}
	}
	return []string{r.Clip, r.Sampler, r.Noise, strconv.Itoa(r.Steps), fmt.Sprintf("%.0f", r.SamplesPerSec),
		mib(r.PeakHeapMiB), fmt.Sprintf("%.4g", r.Sigma), fmt.Sprintf("%.4g", r.NoiseVariance),
		eps, fmt.Sprintf("%.0e", r.Delta), acct, rel, fmt.Sprintf("%.4f", r.TestAcc), r.Err}
}

// NotPrivateMark follows the ε of a cell that is not a private release;
// NotPrivateNote, printed under a table that has one, says what it means.
const (
	NotPrivateMark = "†"
	NotPrivateNote = "† seeded noise and sampling (reproducible): NOT a private release, since anyone who knows the seed can recompute and subtract the noise; ε describes the mechanism only"
)

// notPrivateNote is the footnote line rows need ("" when none).
func notPrivateNote(rows []Row) string {
	for _, r := range rows {
		if r.NotPrivate && r.Accountant != "" {
			return NotPrivateNote + "\n"
		}
	}
	return ""
}

func mib(v float64) string {
	if v == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f", v)
}

// WriteTable prints rows as an aligned terminal table.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(displayHeader, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(display(r), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, notPrivateNote(rows))
	return err
}

// WriteMarkdown prints rows as a GitHub markdown table.
func WriteMarkdown(w io.Writer, rows []Row) error {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" ")
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(c, "|", `\|`), "\n", " "))
			b.WriteString(" |")
		}
		b.WriteString("\n")
	}
	line(displayHeader)
	sep := make([]string, len(displayHeader))
	for i := range sep {
		sep[i] = "---"
		if i >= 3 && i <= 12 && i != 10 && i != 11 { // numbers right-aligned
			sep[i] = "---:"
		}
	}
	line(sep)
	for _, r := range rows {
		line(display(r))
	}
	if note := notPrivateNote(rows); note != "" {
		b.WriteString("\n" + note)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// CSVHeader names the CSV columns (Row's JSON keys).
var CSVHeader = []string{"clip", "sampler", "noise", "steps", "train_n", "samples", "seconds", "samples_per_sec",
	"peak_heap_mib", "peak_sys_mib", "sigma", "sensitivity", "dim", "noise_variance", "epsilon", "delta",
	"accountant", "relation", "test_acc", "error"}

// WriteCSV writes rows with every number at full precision.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range rows {
		rec := []string{r.Clip, r.Sampler, r.Noise, strconv.Itoa(r.Steps), strconv.Itoa(r.TrainN), strconv.Itoa(r.Samples),
			f(r.Seconds), f(r.SamplesPerSec), f(r.PeakHeapMiB), f(r.PeakSysMiB), f(r.Sigma), f(r.Sensitivity),
			strconv.Itoa(r.Dim), f(r.NoiseVariance), f(r.Epsilon), f(r.Delta), r.Accountant, r.Relation, f(r.TestAcc), r.Err}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
