# R columns for stats/ks/testdata/more_refs.csv (called by make_refs.py).
#
#   Rscript make_refs.R <samples.csv> <out.csv>
#
# samples.csv has case_id,sample,value,count (histograms). For every case this
# runs ks.test(x, y) with the defaults (exact = NULL: exact conditional on ties
# iff n1*n2 < 10000, else asymptotic) and writes the p-value with 17
# significant digits, the method string and the R version.

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 2) stop("usage: Rscript make_refs.R samples.csv out.csv")
s <- read.csv(args[1])
ids <- unique(s$case_id)
rows <- lapply(ids, function(id) {
  d <- s[s$case_id == id, ]
  x <- rep(d$value[d$sample == 1], d$count[d$sample == 1])
  y <- rep(d$value[d$sample == 2], d$count[d$sample == 2])
  r <- suppressWarnings(ks.test(x, y))
  data.frame(case_id = id,
             r_version = paste(R.version$major, R.version$minor, sep = "."),
             p_r_default = sprintf("%.17g", r$p.value),
             d_r = sprintf("%.17g", r$statistic),
             r_default_method = r$method)
})
write.csv(do.call(rbind, rows), args[2], row.names = FALSE)
