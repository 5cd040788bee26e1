# Grouped bars of median GOPS per shape, one bar per library/variant series.
#   gnuplot -e "datafile='build/bench.dat'; outfile='build/bench.png'; series=N" bench/chart.gp
# datafile is bench/report.py's --data output: a header line naming the series,
# then one line per shape (first column RowxColxDepth), NaN where a result is
# missing. The y axis is logarithmic: generic C and AVX-512 kernels differ by
# more than an order of magnitude.

if (!exists("datafile")) datafile = 'build/bench.dat'
if (!exists("outfile")) outfile = 'build/bench.png'
if (!exists("series")) series = 1

width = 400 + 120 * series
if (width < 1400) width = 1400
if (width > 3200) width = 3200
set terminal pngcairo size width, 700 font ",10" noenhanced
set output outfile

# Enough distinct colours that series do not repeat within a group.
array colours[16] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", \
                     "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", \
                     "#8c6d31", "#843c39", "#7b4173", "#000000"]
do for [i = 1:16] { set linetype i linecolor rgb colours[i] }

set datafile separator "\t"
set datafile missing "NaN"
set title "gemmi8-bench: median GOPS per shape (Row x Col x Depth = N x M x K), single thread"
set ylabel "GOPS (2*M*N*K / s / 1e9)"
set logscale y
set yrange [0.5:*]
set offsets 0, 0, graph 0.08, 0
set grid ytics mytics
set style data histograms
set style histogram clustered gap 2
set style fill solid 0.9 border -1
set boxwidth 0.9
set xtics rotate by -30 nomirror
set key outside right top vertical
set key autotitle columnheader

plot for [i = 2:series + 1] datafile using i:xtic(1)
