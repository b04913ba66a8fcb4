package forecast

// FlushSlices is flushSlices, for TestFlushSlices.
var FlushSlices = &flushSlices
