// Package deps pins the module's dependencies before every package that uses
// them has landed, so that `go mod tidy` keeps go.mod stable. Remove an import
// here once real code imports the package.
package deps

import (
	_ "github.com/schollz/progressbar/v3"
	_ "go4.org/unsafe/assume-no-moving-gc"
	_ "golang.org/x/sys/cpu"
	_ "gonum.org/v1/gonum/mat"
	_ "gonum.org/v1/plot"
	_ "gorgonia.org/gorgonia"
	_ "gorgonia.org/tensor"
)
