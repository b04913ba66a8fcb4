// Package starpudirtest gives tests a StarPU sampling directory and an
// independent check of the fits made on it: a temporary $STARPU_HOME
// holding models/starpudir's fixtures (written by StarPU 1.3.10: the mlr
// example and cholesky_implicit), and least squares on the mlr kernel's
// monomials by the normal equations, independent of the models' QR.
package starpudirtest

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// fixtures is models/starpudir/testdata/codelets, found from this file.
func fixtures() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "models", "starpudir", "testdata", "codelets")
}

// Home copies the fixtures into a temporary $STARPU_HOME: its path and
// its codelets directory (.starpu/sampling/codelets).
func Home(t testing.TB) (home, codelets string) {
	t.Helper()
	home = t.TempDir()
	codelets = filepath.Join(home, ".starpu", "sampling", "codelets")
	for _, sub := range []string{"tmp", "45"} {
		ents, err := os.ReadDir(filepath.Join(fixtures(), sub))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(codelets, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			data, err := os.ReadFile(filepath.Join(fixtures(), sub, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(codelets, sub, e.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return home, codelets
}

// LSMonomials is least squares of y on 1, M²N and N³K over the rows x
// (M, N, K), the mlr example's model, by the normal equations and
// Gaussian elimination with partial pivoting.
func LSMonomials(x [][]float64, y []float64) [3]float64 {
	var a [3][3]float64
	var b [3]float64
	for i, r := range x {
		row := [3]float64{1, r[0] * r[0] * r[1], r[1] * r[1] * r[1] * r[2]}
		for p := range 3 {
			b[p] += row[p] * y[i]
			for q := range 3 {
				a[p][q] += row[p] * row[q]
			}
		}
	}
	for c := range 3 {
		piv := c
		for r := c + 1; r < 3; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		a[c], a[piv] = a[piv], a[c]
		b[c], b[piv] = b[piv], b[c]
		for r := c + 1; r < 3; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k < 3; k++ {
				a[r][k] -= f * a[c][k]
			}
			b[r] -= f * b[c]
		}
	}
	var w [3]float64
	for r := 2; r >= 0; r-- {
		s := b[r]
		for k := r + 1; k < 3; k++ {
			s -= a[r][k] * w[k]
		}
		w[r] = s / a[r][r]
	}
	return w
}
