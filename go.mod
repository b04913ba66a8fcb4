module github.com/tracecast/tracecast

go 1.26
