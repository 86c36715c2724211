// Package trainer runs DP-SGD: the per-sample-gradient loop of DESIGN.md
// ("One training step") as a library. A [Config] is validated up front
// (every bad value named in one error); [Run] then samples, gathers,
// computes per-sample gradients in physical chunks, clips, adds noise,
// takes an optimizer step, projects when asked, and updates every
// accountant, recording a JSON-lines metrics file, a summary, plots and
// atomic checkpoints from which a run resumes bit for bit.
//
// The DP noise and the sampling are drawn from ChaCha8 streams seeded from
// crypto/rand; Config.Seeded derives them from Config.Seed instead, for
// reproducible (and therefore not privately releasable) runs. The crypto
// seed lives in the checkpoint, which is private state.
//
// The trainer is plumbing: models, samplers, clipping, optimizers and
// accountants live in their own packages.
package trainer
