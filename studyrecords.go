package tracecast

// HitRate is the KS hit-rate of consecutive windows of one size over a
// trace's signal (tracecast hitrate): how often a window's distribution
// was not told apart from the previous window's.
type HitRate struct {
	Trace string `json:"trace" desc:"the trace, as named on the command line (<stdin> for standard input)"`
	Class string `json:"class" desc:"the class counted: idle, compute, comm, other"` // the class counted: idle, compute, ...
	// Window is the window size in samples; Samples the signal's length.
	Window  int `json:"window" desc:"the window size, in samples" schema:"minimum=1"`
	Samples int `json:"samples" desc:"samples in the signal" schema:"minimum=0"`
	// Compared counts the pairs of consecutive complete windows, Hits
	// those whose KS test did not reject "same distribution" at the
	// level alpha.
	Compared int `json:"compared" desc:"pairs of consecutive complete windows compared (a trailing partial window is not)" schema:"minimum=0"`
	Hits     int `json:"hits" desc:"compared pairs whose KS test did not reject 'same distribution' at the level alpha" schema:"minimum=0"`
	// HitRate is Hits/Compared: NaN (null) when nothing was compared.
	HitRate float64 `json:"hit_rate" tracecast:"nullable" desc:"hits / compared; null when nothing was compared" schema:"minimum=0,maximum=1"`
	Method  string  `json:"method" desc:"the KS p-value method" schema:"enum=matlab|scipy|r"` // the KS p-value method: matlab, scipy, r
	// Period is the sampling period in TimeUnit (the trace's), WindowS
	// the window's length in seconds.
	Period   float64 `json:"period" desc:"the sampling period, in time_unit" schema:"minimum=0"`
	TimeUnit string  `json:"time_unit" desc:"the unit of the trace's times and of period: s, ms, us, ns"`
	WindowS  float64 `json:"window_s" desc:"the window's length in seconds (window x period)" schema:"minimum=0"`
	R        int     `json:"r" desc:"the selected containers (StarPU workers or SMPI ranks)" schema:"minimum=0"` // the selected containers
}

// KSTest is a two-sample Kolmogorov–Smirnov test of two samples of
// integers (tracecast ks).
type KSTest struct {
	N1 int `json:"n1" desc:"size of the first sample" schema:"minimum=0"`
	N2 int `json:"n2" desc:"size of the second sample" schema:"minimum=0"`
	// D is the statistic, DNum/DDen exactly (DDen = N1·N2).
	D    float64 `json:"d" desc:"the statistic: the largest distance between the two empirical distribution functions" schema:"minimum=0,maximum=1"`
	DNum int64   `json:"d_num" desc:"d exactly: d_num / d_den" schema:"minimum=0"`
	DDen int64   `json:"d_den" desc:"n1 x n2" schema:"minimum=0"`
	// P is the two-sided p-value (NaN, null, if a sample is empty).
	P     float64 `json:"p" tracecast:"nullable" desc:"the two-sided p-value; null when a sample is empty" schema:"minimum=0,maximum=1"`
	Alpha float64 `json:"alpha" desc:"the significance level" schema:"minimum=0,maximum=1"`
	// Reject is P < Alpha; Hit is its negation (same distribution not
	// rejected).
	Reject bool   `json:"reject" desc:"p < alpha: the samples are told apart"`
	Hit    bool   `json:"hit" desc:"not reject: same distribution not rejected"`
	Method string `json:"method" desc:"how p was computed: as MATLAB's kstest2, SciPy's ks_2samp or R's ks.test" schema:"enum=matlab|scipy|r"` // matlab, scipy, r
	// Exact: P came from an exact distribution, not an asymptotic one.
	Exact bool `json:"exact" desc:"p came from an exact distribution rather than an asymptotic one"`
}
