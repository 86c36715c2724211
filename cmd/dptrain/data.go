package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/features"
	"github.com/dptrain/dptrain/trainer"
)

const dataUsage = `usage:
  dptrain data list   [--data DIR]                 what is found where
  dptrain data fetch  NAME [--to DIR] [--base-url URL] [--quiet]
                                                   download with SHA-256 checks (resumable)
  dptrain data verify [NAME] [--data DIR]          check checksums, counts and shapes
  dptrain data import --from DIR --to DIR [--classes a,b,...]
                                                   image folder (DIR/{train,test}/<class>/*.jpg|png,
                                                   32x32) to the CIFAR-10 binary layout in --to
  dptrain data clean-cache [--dir DIR] [--max BYTES]
                                                   remove cached ScatterNet features (functions of the
                                                   private images; 0600 files), all or down to BYTES

NAME is one of: mnist, fashion-mnist, cifar10.
Search order: --data DIR, $DPTRAIN_DATA, /usr/share/datasets, the embedded Fashion-MNIST subset.`

func runData(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, dataUsage)
		return badInput("missing subcommand (list, fetch, verify or import)")
	}
	switch args[0] {
	case "list":
		return dataList(args[1:], stdout, stderr)
	case "fetch":
		return dataFetch(ctx, args[1:], stdout, stderr)
	case "verify":
		return dataVerify(args[1:], stdout, stderr)
	case "import":
		return dataImport(args[1:], stdout, stderr)
	case "clean-cache":
		return dataCleanCache(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, dataUsage)
		return errHelp
	}
	fmt.Fprintln(stderr, dataUsage)
	return badInput("unknown subcommand %q (want list, fetch, verify, import or clean-cache)", args[0])
}

// dataCleanCache evicts cached features: all of them, or the oldest until
// the cache fits --max bytes.
func dataCleanCache(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data clean-cache", stdout)
	dir := fs.String("dir", trainer.DefaultFeatureCache(), "feature cache directory")
	maxBytes := fs.Int64("max", 0, "keep the newest files up to this many bytes (0: remove all)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *maxBytes < 0 {
		return badInput("--max must be >= 0, got %d", *maxBytes)
	}
	removed, err := features.Evict(*dir, *maxBytes, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed %d cached feature file(s) from %s\n", len(removed), *dir)
	return nil
}

// parseWithArgs parses flags that may come before or after positional
// arguments (dptrain data fetch NAME --to DIR) and returns the positionals.
func parseWithArgs(fs *flag.FlagSet, args []string, maxPos int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, asInput(err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) > maxPos {
		return nil, badInput("unexpected argument %q", pos[maxPos])
	}
	return pos, nil
}

func dataList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data list", stdout)
	dir := fs.String("data", "", "data directory searched first")
	if _, err := parseWithArgs(fs, args, 0); err != nil {
		return err
	}
	found := datasets.List(datasets.Options{Dir: *dir})
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tTRAIN\tTEST\tSHAPE\tPATH\tSTATUS")
	seen := map[string]bool{}
	for _, f := range found {
		seen[f.Name] = true
		status := "ok"
		if f.Err != nil {
			status = "error: " + f.Err.Error()
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", f.Name, f.Source.Kind, f.TrainN, f.TestN, shapeString(f.Shape), f.Source.Path, status)
	}
	for _, n := range datasets.Names() {
		if !seen[n] {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\tnot found (dptrain data fetch %s)\n", n, n)
		}
	}
	return tw.Flush()
}

func shapeString(s []int) string {
	if len(s) == 0 {
		return "-"
	}
	p := make([]string, len(s))
	for i, v := range s {
		p[i] = fmt.Sprint(v)
	}
	return strings.Join(p, "x")
}

func dataFetch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data fetch", stdout)
	to := fs.String("to", os.Getenv(datasets.EnvData), "destination directory (files go to DIR/NAME); default $"+datasets.EnvData)
	base := fs.String("base-url", "", "download from this base URL instead of the canonical mirrors (also $"+datasets.EnvFetchURL+")")
	quiet := fs.Bool("quiet", false, "no progress bar")
	pos, err := parseWithArgs(fs, args, 1)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return badInput("missing dataset name (one of %s)", strings.Join(datasets.Names(), ", "))
	}
	if _, err := datasets.Lookup(pos[0]); err != nil {
		return asInput(err)
	}
	if *to == "" {
		return badInput("no destination: pass --to DIR or set $%s", datasets.EnvData)
	}
	opts := datasets.FetchOptions{Dir: *to, BaseURL: *base, Log: stdout}
	if !*quiet {
		opts.Progress = stderr
	}
	dir, err := datasets.Fetch(ctx, pos[0], opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: ready in %s (use --data %s or export %s=%s)\n", pos[0], dir, *to, datasets.EnvData, *to)
	return nil
}

func dataVerify(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data verify", stdout)
	dir := fs.String("data", "", "data directory searched first")
	pos, err := parseWithArgs(fs, args, 1)
	if err != nil {
		return err
	}
	names := datasets.Names()
	if len(pos) == 1 {
		spec, err := datasets.Lookup(pos[0])
		if err != nil {
			return asInput(err)
		}
		names = []string{spec.Name}
	}
	checked, failed := 0, 0
	for _, n := range names {
		locs, err := datasets.Locate(n, datasets.Options{Dir: *dir})
		if err != nil {
			return err
		}
		for _, loc := range locs {
			checked++
			r := datasets.Verify(loc)
			fmt.Fprintf(stdout, "%s at %s:\n", n, loc.Source)
			for _, f := range r.Files {
				if f.Err != nil {
					fmt.Fprintf(stdout, "  FAIL %v\n", f.Err)
				} else if strings.HasPrefix(f.Status, "unverified") {
					fmt.Fprintf(stdout, "  --   %s: %s\n", f.Path, f.Status)
				} else {
					fmt.Fprintf(stdout, "  ok   %s: %s\n", f.Path, f.Status)
				}
			}
			if r.Err != nil {
				fmt.Fprintf(stdout, "  FAIL %v\n", r.Err)
			} else {
				fmt.Fprintf(stdout, "  ok   %d train + %d test, shape %s\n", r.Summary.TrainN, r.Summary.TestN, shapeString(r.Summary.Shape))
			}
			if !r.OK() {
				failed++
			}
		}
	}
	// A copy that fails its checks is bad input data (exit status 2, as a
	// corrupt file given to train is).
	if checked == 0 {
		return badInput("no dataset found to verify (%s)", strings.Join(names, ", "))
	}
	if failed > 0 {
		return badInput("%d of %d location(s) failed verification", failed, checked)
	}
	return nil
}

func dataImport(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data import", stdout)
	from := fs.String("from", "", "image-folder root holding train/<class>/ and test/<class>/")
	to := fs.String("to", "", "output directory for data_batch_1..5.bin, test_batch.bin, batches.meta.txt")
	classes := fs.String("classes", "", "comma-separated class order (default: class directories sorted by name)")
	if _, err := parseWithArgs(fs, args, 0); err != nil {
		return err
	}
	if *from == "" || *to == "" {
		return badInput("both --from and --to are required")
	}
	var order []string
	if *classes != "" {
		order = strings.Split(*classes, ",")
	}
	rep, err := datasets.ImportCIFAR10(*from, *to, order)
	if err != nil {
		return asInput(err)
	}
	fmt.Fprintf(stdout, "imported %d train + %d test images, classes %s, into %s (load with --data %s)\n",
		rep.TrainN, rep.TestN, strings.Join(rep.Classes, ","), *to, *to)
	return nil
}
