package component

import (
	"bytes"
	"testing"
)

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	err := WriteTable(&b, []Description{{Kind: "stage", Name: "x", Doc: "does x",
		Options: []OptionDescription{{Key: "window", Type: "int", Default: "100"}, {Key: "class", Type: "string"}}}})
	want := "stage x   does x\n  window  int     default 100\n  class   string  \n\n"
	if err != nil || b.String() != want {
		t.Errorf("%v\n%q\nwant\n%q", err, b.String(), want)
	}
}
