// Package models is dptrain's model zoo and the contract between models and
// the training loop.
//
// model.go defines PerSampleModel, the float32 interface the trainer uses:
// a flat parameter vector with named groups, materialised per-sample
// gradients, and the norm-only path (per-sample squared norms, then a scaled
// sum). Every zoo model is a *Net, a thin adapter over an nn.Network[float32]:
//
//	NewLogisticRegression(d, classes, opts)  multinomial; classes = 2 is binary (one logit, logistic loss)
//	NewLinearRegression(d, opts)             squared loss ½(z − t)²
//	NewMLP(in, widths, out, activation, opts)
//	NewMNISTCNN(opts)                        the Opacus / Tramèr–Boneh MNIST CNN (26,010 parameters)
//	NewResNet20GN(classes, opts)             CIFAR ResNet-20 with GroupNorm (272,474 parameters)
//	NewResNet22(classes, opts)               the paper 003 ResNet22 reconstruction (291,034 parameters)
//
// The generic builders (LogisticRegressionNet, MLPNet, MNISTCNNNet,
// ResNetGNNet, ...) return the same architectures as nn.Network[T] for any
// precision, for float64 gradient checks and for the Gorgonia oracle.
//
// Chunker runs a logical batch of any size through a model in chunks of at
// most MaxBatch samples (physical batching), so memory stays bounded
// whatever the Poisson batch size. Save and Load store parameters with the
// architecture's name and groups, and refuse to load into another
// architecture.
//
// The package computes gradients only: clipping policy, noise and accounting
// live in clip, trainer and accountant.
package models
