# summary-expect.awk — what kmview's terminal summary must print, from
# kmgen's expectations ("key<TAB>value" lines), as normalised lines:
#   figure KEY MIN MEAN MAX MAXRANK
#   share WHAT SECONDS PERCENT
#   routine NAME NET SHARE MIN MAX MAX/MEAN RANK ELAPSED COUNTS MPI IO
# in kmview's formats (4 significant digits, one decimal for percentages),
# routines in order of mean net time, largest first.  summary-got.awk
# turns the summary itself into the same lines.
BEGIN { FS = "\t" }
{ v[$1] = $2 }
function g(x) { return x == "" ? "-" : sprintf("%.4g", x) }
function pct(x) { return sprintf("%.1f%%", 100 * x) }
function cnt(x) { return x == int(x) ? sprintf("%.0f", x) : sprintf("%.7g", x) }
END {
    nf = split("total_time counts_of_routines counts_of_time_get_function " \
               "time_get_function_cost_1_call time_get_function_cost_total " \
               "output_counts_by_km_writ mpi_time io_time time_outside_routines " \
               "time_in_unmeasured_callees routines", keys, " ")
    split("0 1 1 0 0 1 0 0 0 0 1", integer, " ")
    for (k = 1; k <= nf; k++) {
        p = "figures.csv:" keys[k] ":"
        if (integer[k])
            print "figure", keys[k], cnt(v[p "min"]), cnt(v[p "mean"]), cnt(v[p "max"]), v[p "max_rank"]
        else
            print "figure", keys[k], g(v[p "min"]), g(v[p "mean"]), g(v[p "max"]), v[p "max_rank"]
    }
    t = v["run.csv:total_time:value"]
    print "share Total", g(t), pct(1)
    print "share MPI", g(v["run.csv:mpi_time:value"]), pct(v["run.csv:mpi_share:value"])
    print "share I/O", g(v["run.csv:io_time:value"]), pct(v["run.csv:io_share:value"])
    print "share Computation", g(v["run.csv:computation_time:value"]), pct(v["run.csv:computation_share:value"])
    print "share Net", g(v["run.csv:routines_net_time:value"]), pct(v["run.csv:routines_net_share:value"])
    o = v["figures.csv:time_outside_routines:mean"]
    print "share Outside", g(o), pct(o / t)
    u = v["figures.csv:time_in_unmeasured_callees:mean"]
    print "share In", g(u), pct(u / t)
    print "pred T_1pe", g(v["run.csv:t_1pe:value"])
    print "pred Speedup", g(v["run.csv:speedup:value"])
    print "pred Efficiency", pct(v["run.csv:efficiency:value"])
    # routines by mean net time, ties by id (insertion sort: few of them)
    n = 0
    for (id = 1; ("routines.csv:" id ":name") in v; id++) {
        m = v["routines.csv:" id ":net_mean"] + 0
        for (j = n; j > 0 && order_m[j] < m; j--) { order[j + 1] = order[j]; order_m[j + 1] = order_m[j] }
        order[j + 1] = id; order_m[j + 1] = m; n++
    }
    for (k = 1; k <= n; k++) {
        p = "routines.csv:" order[k] ":"
        plus = v[p "extrapolated"] == 1 ? "+" : ""
        print "routine", v[p "name"], g(v[p "net_mean"]), pct(v[p "net_share"]), g(v[p "net_min"]),
              g(v[p "net_max"]), g(v[p "net_max_over_mean"]), v[p "net_max_rank"],
              g(v[p "elapsed_mean"]), plus sprintf("%.6g", v[p "counts_mean"]), g(v[p "mpi_mean"]),
              g(v[p "io_mean"])
    }
}
