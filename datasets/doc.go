// Package datasets loads the training data dptrain works on and makes the
// synthetic data its tests and paper reproductions need.
//
// Everything ends up in one in-memory type, [Dataset]: float32 features in a
// row-major N×D slice, int class labels, and the per-example shape. Images
// are scaled to [0,1] by dividing each byte by 255; no other normalisation is
// applied here (centring and scaling are data-dependent preprocessing whose
// privacy cost must be declared, so they belong to package preprocess).
//
// Readers: IDX (MNIST, Fashion-MNIST; gzip or raw, detected from the first
// bytes), the CIFAR-10 binary batches, CSV for tabular data with missing
// values, and image folders (root/split/class/*.png|jpg), which
// [ImportCIFAR10] converts once to the CIFAR-10 binary layout, and NumPy .npy
// pairs ([LoadNPY]), whose float32 features are memory-mapped so a file
// larger than memory trains (docs/npy.md). Every reader returns an error naming the file and the problem for
// truncated or corrupt input; none panics on bad data. Such errors wrap
// [ErrBadData], which the CLI maps to the bad-input exit status.
//
// Discovery ([Load], [List]) looks for a named dataset in an explicit
// directory, then $DPTRAIN_DATA, then Debian's /usr/share/datasets, then the
// real Fashion-MNIST subset embedded in the binary ([Embedded]), and says
// where it found it. [Fetch] downloads the canonical files with SHA-256
// verification, resume and atomic renames; [Verify] re-checks them.
//
// Synthetic generators ([GaussianMixture], [DPSGDFCounterexample],
// [LogisticSynthetic], [SeparableBall], [LowRankClassification],
// [MissingTabular]) follow the definitions in the method pages of docs/ and
// are seeded through rng.
//
// The package does not batch, shuffle or sample (package sampler does), and
// it does not augment images.
package datasets
