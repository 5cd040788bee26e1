# Grouped bars of median GOPS per shape, one bar per series, plus horizontal lines
# (machine peaks). bench/report.py runs it:
#   gnuplot -e "datafile='build/bench.dat'; outfile='build/bench.png'; series=6; \
#               nshapes=10; ymin=5; ymax=2000; charttitle='...'; nlines=1; \
#               line1=1040; linelabel1='vpdpbusd peak'" bench/chart.gp
# datafile is report.py's --data output: a header line naming the series, then one
# line per shape (first column RowxColxDepth), NaN where a result is missing. The y
# axis is logarithmic: the series span more than an order of magnitude.

if (!exists("datafile")) datafile = 'build/bench.dat'
if (!exists("outfile")) outfile = 'build/bench.png'
if (!exists("series")) series = 1
if (!exists("charttitle")) charttitle = 'gemmi8-bench: median GOPS per shape'
if (!exists("nlines")) nlines = 0
if (!exists("nshapes")) nshapes = 10

set terminal pngcairo size 1600, 800 font ",11" noenhanced
set output outfile

array colours[10] = ["#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd", "#7f7f7f", \
                     "#8c564b", "#e377c2", "#bcbd22", "#17becf"]
do for [i = 1:10] { set linetype i linecolor rgb colours[i] }

set datafile separator "\t"
set datafile missing "NaN"
set title charttitle
set ylabel "GOPS (2*M*N*K / s / 1e9), log scale"
set logscale y
if (exists("ymin") && exists("ymax")) { set yrange [ymin:ymax] } else { set yrange [*:*] }
set xrange [-0.6:nshapes - 0.4]
set grid ytics mytics
set style data histograms
set style histogram clustered gap 1.5
set style fill solid 0.9 border -1
set boxwidth 0.9
set xtics rotate by 20 right nomirror
set key outside below horizontal
set key autotitle columnheader

# Peaks as dashed lines across the chart, labelled at the left on a white box.
set style textbox opaque noborder
do for [i = 1:nlines] {
  v = value(sprintf("line%d", i))
  set arrow i from graph 0, first v to graph 1, first v nohead dashtype 2 linewidth 1.5 \
      linecolor rgb "#000000" front
  set label i value(sprintf("linelabel%d", i)) . sprintf(" %.0f", v) at graph 0.005, first v \
      offset 0, 0.7 font ",9" boxed front
}

plot for [i = 2:series + 1] datafile using i:xtic(1)
