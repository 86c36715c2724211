// Package trainer runs DP-SGD: the per-sample-gradient loop of
// docs/architecture.md#one-training-step as a library. A [Config] is validated
// up front (every bad value named in one error); [Run] then samples, gathers,
// computes per-sample gradients in physical chunks, clips, adds noise,
// takes an optimizer step, projects when asked, and updates every
// accountant, recording a JSON-lines metrics file, a summary, plots and
// atomic checkpoints from which a run resumes bit for bit.
//
// What a run releases: the output directory holds release/, which may be
// published, and private/ (mode 0700), which must not be. Everything in
// release/ is covered by the printed ε or is a function of public data: the
// model; summary.json (ε per accountant with δ and the neighbouring
// relation, σ, q, steps, the configuration, the claim in words); the
// metrics' step, ε and test-set figures; with ClippedCountSigma, each step's
// clipped count plus Gaussian noise, its cost composed into ε (the step is
// one Poisson-subsampled Gaussian at σ_eff = (σ⁻² + σ_b⁻²)^(−1/2)); test and ε
// plots drawn from those.
// Each released field declares its provenance (a `prov` tag: config,
// account, model or noised) and tests refuse any other. private/ holds the
// checkpoint (with the crypto seed of the noise; removed when the run
// completes unless KeepCheckpoint), any statistic of the training data
// (batch loss, gradient norms, clipped fraction, realised batch size, train
// accuracy, wall time: only with PrivateDiagnostics), per-instance files
// and messages that name records. The number of training records n is
// treated as public. A bound that depends on what is released (the
// hidden-state bound: last iterate only) qualifies only when the outputs
// satisfy it: a final-only run evaluates once, at the end.
//
// The DP noise and the sampling are drawn from ChaCha8 streams seeded from
// crypto/rand; Config.Seeded derives them from Config.Seed instead, for
// reproducible (and therefore not privately releasable) runs. The crypto
// seed lives in the checkpoint, which is private state.
//
// Two recipes change what one step computes, not its account: augmentation
// multiplicity (augment.go: an example's gradient is the mean over K crops
// and flips, clipped once) and adaptive clipping (quantile.go: the clip norm
// follows a noisy quantile estimate whose count shares the step's Gaussian
// mechanism, so σ accounts both and the gradient is noised at z_Δ ≥ σ).
//
// Your model on your data, in memory (the runnable programs are the
// Example functions of example_test.go and ownlib_example_test.go):
//
//	train, _ := datasets.FromSlices("mine", rows, labels) // [][]float32, []int
//	train.SetSchema([]string{"age", "income"}, []string{"no", "yes"})
//	m, _ := models.New(models.Spec{Arch: "logreg", InputSize: 2, Classes: 2}, models.Options{Seed: 1})
//	cfg := trainer.Default()
//	cfg.Epsilon, cfg.Epochs, cfg.BatchSize, cfg.ClipNorm, cfg.LR = 4, 5, 200, 1, 0.5
//	sum, err := trainer.Run(ctx, cfg, trainer.Options{Model: m, Train: train, Test: test, Log: os.Stderr})
//	probs, err := m.PredictRecords(raw, n) // m carries the run's preprocessing, columns and classes
//
// The test set is public (its figures are published): Options.Test, or
// Options.HoldOut of the training rows, which the claim then leaves
// unprotected.
//
// The trainer is plumbing: models, samplers, clipping, optimizers and
// accountants live in their own packages.
package trainer
