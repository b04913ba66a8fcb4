package report

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDemoSummary(t *testing.T) {
	entities := `{"nature":"Container","container":"0","type":"Worker","start":0,"end":100,"value":"CPU0"}
{"nature":"State","container":"CPU0","type":"Worker State","start":0,"end":60,"value":"GEMM"}
{"nature":"State","container":"CPU1","type":"Worker State","start":10,"end":30,"value":"TRSM"}
{"nature":"State","container":"CPU1","type":"Worker State","start":30,"end":50,"value":"SYRK"}
{"nature":"State","container":"MEM0","type":"Memory Node State","start":0,"end":120,"value":"Allocating"}
{"nature":"Variable","container":"CPU0","type":"GFlops","start":0,"end":100,"number":2}
{"nature":"Event","container":"CPU0","type":"Ev","start":5,"end":5,"value":"x"}
`
	records := `{"record":"window","compared":true,"hit":true}
{"record":"window","compared":false}
{"record":"prediction","query":"idle>=50%","likelihood":0.25,"horizon_s":0.1}
{"record":"prediction","query":"idle>=50%","likelihood":0.75,"horizon_s":0.1}
{"record":"prediction","query":"compute>=2","likelihood":1,"horizon_s":0.1}
{"record":"verdict","query":"idle>=50%","likelihood":0.25,"observed":0,"hit":true}
{"record":"verdict","query":"idle>=50%","likelihood":0.75,"observed":1,"hit":false}
{"record":"alert","kind":"idle-opportunity","query":"idle>=50%"}
`
	rs, err := ReadReplay(strings.NewReader(entities), "e.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := ReadPredictions(strings.NewReader(records), "r.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteDemo(&out, rs, 46*time.Millisecond+300*time.Microsecond, ps); err != nil {
		t.Fatal(err)
	}
	want := `tracecast demo: StarPU Cholesky, 2 workers, 120 ms of execution, read in 46ms
  records: 1 containers, 4 states, 1 variables, 1 events, 0 links
  worker time by state (all imbrication levels): GEMM 60.0% SYRK 20.0% TRSM 20.0%
  prediction phase: 2 windows of 0.1 s; 2 verdicts, KS hit rate 50.0%; alerts: 1 idle opportunities, 0 regime changes
  P(compute>=2) over the next 0.1 s: mean 1.00 over 1 predictions
  P(idle>=50%) over the next 0.1 s: mean 0.50 over 2 predictions
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	// The same from the files, followed by the outputs by sink id.
	dir := t.TempDir()
	ef, rf := filepath.Join(dir, "e.jsonl"), filepath.Join(dir, "r.jsonl")
	os.WriteFile(ef, []byte(entities), 0o644)
	os.WriteFile(rf, []byte(records), 0o644)
	out.Reset()
	err = WriteDemoFiles(&out, ef, rf, 46*time.Millisecond, map[string]string{"records": ef, "archive": "a.arrow"}, map[string]string{"records": rf})
	if want += "  archive      a.arrow\n  records      " + ef + "\n  records      " + rf + "\n"; err != nil || out.String() != want {
		t.Errorf("from files: %v\n%s\nwant\n%s", err, out.String(), want)
	}
	if err := WriteDemoFiles(io.Discard, filepath.Join(dir, "missing"), rf, 0); err == nil {
		t.Error("a missing file read")
	}
	// No verdict: the hit rate is n/a, not 0 %.
	out.Reset()
	if err := WriteDemo(&out, rs, time.Millisecond, Predictions{Windows: 1, Horizon: 0.1}); err != nil || !strings.Contains(out.String(), "0 verdicts, KS hit rate n/a;") {
		t.Errorf("no verdict: %v\n%s", err, out.String())
	}
	if top := rs.TopStates(1); len(top) != 1 || top[0].Value != "GEMM" || top[0].Fraction != 0.6 {
		t.Errorf("top state %+v", top)
	}
	if _, err := ReadReplay(strings.NewReader("{\n"), "bad.jsonl"); err == nil || !strings.HasPrefix(err.Error(), "bad.jsonl: ") {
		t.Errorf("bad JSON: %v", err)
	}
	if _, err := ReadPredictions(strings.NewReader("nope\n"), "bad.jsonl"); err == nil || !strings.HasPrefix(err.Error(), "bad.jsonl: ") {
		t.Errorf("bad JSON: %v", err)
	}
}
