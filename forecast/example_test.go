package forecast_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/forecast"
)

// Feed an Engine the changes of a class count — here how many of 8
// workers are idle, as a scheduler's runtime knows it or as stages/forecast
// derives it from a trace — and get forecasts of idle capacity over the
// horizons a consumer plans on, their outcomes once due, alert episodes
// and rolling skill against persistence, climatology and the KS windows
// (docs/forecasts.md).
func ExampleEngine() {
	q, err := forecast.ParseQuery("idle>=25%") // at least 2 of the 8 workers idle
	if err != nil {
		panic(err)
	}
	var forecasts, outcomes int
	var first tracecast.Forecast
	var last []tracecast.Skill
	e, err := forecast.New(forecast.Config{
		Run: "example", Class: "idle", Queries: []forecast.Query{q},
		Horizons: []float64{0.05}, Every: 0.01, // seconds: forecasts over the next 50 ms, every 10 ms
		Method: forecast.Auto,
	}, forecast.Sink{
		Forecast: func(f tracecast.Forecast) {
			if forecasts++; forecasts == 1 {
				first = f
			}
		},
		Outcome: func(tracecast.Outcome) { outcomes++ },
		Skill: func(s tracecast.Skill) {
			if s.End != "" { // the run's last skill records
				last = append(last, s)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	// A run of 20 s whose idle count drifts: phases of 1 s, mostly busy
	// or mostly idle, with noise every 5 ms.
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 4000 {
		t := float64(i) * 0.005
		idle := r.IntN(3)
		if int(t)%2 == 1 {
			idle += 3
		}
		e.Change(t, idle, 8)
	}
	e.Finish(20)
	fmt.Println("first forecast:", string(first.AppendJSON(nil)))
	fmt.Println("forecasts:", forecasts, "outcomes:", outcomes)
	for _, s := range last {
		fmt.Printf("%s over %s: %d scored, skill vs persistence %+.2f, vs climatology %+.2f, vs KS windows %+.2f, coverage %.2f\n",
			s.Query, forecast.HorizonLabel(s.Horizon), s.N, s.SkillPersistence, s.SkillClimatology, s.SkillKSPaper, s.Coverage)
	}
	// Output:
	// first forecast: {"record":"forecast","id":"example/idle>=25%/50ms/0","run":"example","class":"idle","query":"idle>=25%","threshold":2,"workers":8,"issued_at":0,"horizon":0.05,"p":1,"mean":0.25,"worker_seconds":0.1,"lo":0,"hi":1,"method":"auto"}
	// forecasts: 2000 outcomes: 1996
	// idle>=25% over 50ms: 1996 scored, skill vs persistence +0.83, vs climatology +0.85, vs KS windows +0.50, coverage 0.91
}
