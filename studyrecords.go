package tracecast

// HitRate is the KS hit-rate of consecutive windows of one size over a
// trace's signal (tracecast hitrate): how often a window's distribution
// was not told apart from the previous window's.
type HitRate struct {
	Trace string `json:"trace"`
	Class string `json:"class"` // the class counted: idle, compute, ...
	// Window is the window size in samples; Samples the signal's length.
	Window  int `json:"window"`
	Samples int `json:"samples"`
	// Compared counts the pairs of consecutive complete windows, Hits
	// those whose KS test did not reject "same distribution" at the
	// level alpha.
	Compared int `json:"compared"`
	Hits     int `json:"hits"`
	// HitRate is Hits/Compared: NaN (null) when nothing was compared.
	HitRate float64 `json:"hit_rate" tracecast:"nullable"`
	Method  string  `json:"method"` // the KS p-value method: matlab, scipy, r
	// Period is the sampling period in TimeUnit (the trace's), WindowS
	// the window's length in seconds.
	Period   float64 `json:"period"`
	TimeUnit string  `json:"time_unit"`
	WindowS  float64 `json:"window_s"`
	R        int     `json:"r"` // the selected containers
}

// AppendJSON writes the hit-rate as one JSON object, "record" first;
// hit_rate is null when nothing was compared.
func (h HitRate) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"hitrate"`...)
	b = appendStr(b, "trace", h.Trace)
	b = appendStr(b, "class", h.Class)
	b = appendI64(b, "window", int64(h.Window))
	b = appendI64(b, "samples", int64(h.Samples))
	b = appendI64(b, "compared", int64(h.Compared))
	b = appendI64(b, "hits", int64(h.Hits))
	b = appendF(b, "hit_rate", h.HitRate)
	b = appendStr(b, "method", h.Method)
	b = appendF(b, "period", h.Period)
	b = appendStr(b, "time_unit", h.TimeUnit)
	b = appendF(b, "window_s", h.WindowS)
	b = appendI64(b, "r", int64(h.R))
	return append(b, '}')
}

// KSTest is a two-sample Kolmogorov–Smirnov test of two samples of
// integers (tracecast ks).
type KSTest struct {
	N1 int `json:"n1"`
	N2 int `json:"n2"`
	// D is the statistic, DNum/DDen exactly (DDen = N1·N2).
	D    float64 `json:"d"`
	DNum int64   `json:"d_num"`
	DDen int64   `json:"d_den"`
	// P is the two-sided p-value (NaN, null, if a sample is empty).
	P     float64 `json:"p" tracecast:"nullable"`
	Alpha float64 `json:"alpha"`
	// Reject is P < Alpha; Hit is its negation (same distribution not
	// rejected).
	Reject bool   `json:"reject"`
	Hit    bool   `json:"hit"`
	Method string `json:"method"` // matlab, scipy, r
	// Exact: P came from an exact distribution, not an asymptotic one.
	Exact bool `json:"exact"`
}

// AppendJSON writes the test as one JSON object, "record" first.
func (k KSTest) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"kstest"`...)
	b = appendI64(b, "n1", int64(k.N1))
	b = appendI64(b, "n2", int64(k.N2))
	b = appendF(b, "d", k.D)
	b = appendI64(b, "d_num", k.DNum)
	b = appendI64(b, "d_den", k.DDen)
	b = appendF(b, "p", k.P)
	b = appendF(b, "alpha", k.Alpha)
	b = appendBool(b, "reject", k.Reject)
	b = appendBool(b, "hit", k.Hit)
	b = appendStr(b, "method", k.Method)
	b = appendBool(b, "exact", k.Exact)
	return append(b, '}')
}
