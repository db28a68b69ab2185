# plot.gp: the results page's plots (bench/RESULTS.md), from the data files
# scripts/bench_report.py writes next to them. Run by scripts/bench.sh:
#   gnuplot -e "dir='bench/results'; blocks=N" bench/plot.gp
set terminal pngcairo size 1100,600 font "sans,10"
set encoding utf8

# ns per message by case and layout (bench peers)
set output dir.'/peers.png'
set title "Judging one message: ns per message, 256 messages at size 7 (log scale, lower is faster)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set ylabel "ns per message (median of 21 reps)"
set xtics rotate by -30 nomirror
set grid ytics
set key top left
plot dir.'/peers.dat' using 2:xtic(1) title 'detail late (as declared)', \
     '' using 3 title 'detail first'

# throughput against message size (bench sweep)
reset
set output dir.'/sweep.png'
set title "Throughput against message size (sizes 2, 7, 15, 40; log scales)"
set logscale xy
set xlabel "message bytes (average over the pool)"
set ylabel "MB/s of message bytes"
set grid xtics ytics
set key outside right
set xrange [2000:16000]
set xtics (2000, 3000, 4000, 6000, 8000, 11000, 16000)
# one colour and point type per series (up to 12)
array colours[12] = ["#1f77b4", "#d62728", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", \
                     "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#aec7e8"]
plot for [i=0:blocks-1] dir.'/sweep.dat' index i using 1:2 with linespoints \
     lw 2 pt (i % 6) + 4 lc rgb colours[(i % 12) + 1] title columnheader(1)
