package tracecast

// Explanation says what carried a run's auto forecasts of one (query,
// horizon) (predict --explain; docs/forecasts.md, "Why a forecast is what
// it is"), published at the run's end: one record for the forecast (kind
// forecast), one per expert of the mix (kind expert) and one per feature
// of the mix's learner, the online ridge regression (kind feature). Only p
// is explained (the mean is forecast alike). A feature the trace has no
// data for (task counts on a SimGrid trace) is present false, its numbers
// null: absent, not of no importance; the queue expert without task counts
// is present false too, with its weight and MSE (it then repeats the
// prior's forecast, and still weighs in the mix).
type Explanation struct {
	ID      string  `json:"id" desc:"RUN/QUERY/HORIZON/explain/KIND/NAME"`
	Run     string  `json:"run" desc:"the run id"`
	Query   string  `json:"query" desc:"the query"`
	Horizon float64 `json:"horizon" desc:"H, seconds" schema:"exclusiveMinimum=0"`
	Method  string  `json:"method" desc:"the forecaster (auto)"`
	Kind    string  `json:"kind" desc:"what is explained: the forecast itself, an expert of its mix, or a feature of the mix's learner" schema:"enum=forecast|expert|feature"`
	Name    string  `json:"name" desc:"forecast: auto; expert: learner, prior, ks-paper, persistence, climatology, queue; feature: its name (docs/forecasts.md)"`
	Present bool    `json:"present" desc:"whether the trace has the data it reads; false (task counts on a SimGrid trace): a feature is absent, its numbers null; the queue expert then repeats the prior's forecast (its weight and MSE kept)"`
	// N is how many forecasts the numbers are over.
	N int `json:"n" desc:"forecast, expert: forecasts scored (their outcome known by the run's end); feature: scored forecasts in the permutation sample" schema:"minimum=0"`
	// MSE is the mean squared error of p over the N scored forecasts.
	MSE float64 `json:"mse" tracecast:"nullable" desc:"forecast, expert: mean squared error of its p over the scored forecasts; null for a feature" schema:"minimum=0"`
	// Weight is an expert's mean weight in the mix of p over the run's
	// issues (the experts' add up to 1).
	Weight float64 `json:"weight" tracecast:"nullable" desc:"expert: its mean weight in the mix of p over the run's issues (the experts' add up to 1); null otherwise" schema:"minimum=0,maximum=1"`
	// Coefficient is a feature's mean coefficient in the learner over the
	// sample.
	Coefficient float64 `json:"coefficient" tracecast:"nullable" desc:"feature: the learner's mean coefficient of it over the sample; null otherwise"`
	// SD is a feature's standard deviation over the sample (0: constant on
	// this run, so of no importance whatever its coefficient).
	SD float64 `json:"sd" tracecast:"nullable" desc:"feature: standard deviation of its value over the sample (0: constant on this run); null otherwise" schema:"minimum=0"`
	// ImportanceLearner and ImportanceMix are permutation importances: how
	// much the MSE of p over the sample grows when the feature's values
	// are permuted among the sampled forecasts (mean of 5 permutations of
	// a fixed seed), each forecast's learner coefficients and expert
	// weights held as they were at its issue.
	ImportanceLearner float64 `json:"importance_learner" tracecast:"nullable" desc:"feature: increase of the learner's MSE of p over the sample when the feature's values are permuted among the sampled forecasts (mean of 5 permutations, fixed seed), the coefficients as at each issue; null otherwise"`
	ImportanceMix     float64 `json:"importance_mix" tracecast:"nullable" desc:"feature: the same increase for the forecast's (the mix's) MSE of p, the experts' weights as at each issue; null otherwise"`
}
