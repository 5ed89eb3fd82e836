package CMRXBench::AppReport;

# bench/app.pl's figures: the rounds of each configuration summed up
# (medians of the rounds), the text tables, the goals of the application benchmark, the
# tables in Markdown (for the README) and the SVG chart of requests/s and
# p99 per configuration.

use strict;
use warnings;
use utf8;
use Exporter 'import';
use CMRXBench::Runner qw(median);
use CMRXBench::Memory qw(commas);
use CMRXBench::Report qw(svg_escape write_svg_file);

our @EXPORT_OK = qw(summarize print_tables evaluate_bars write_markdown write_svg);

# What each row is compared with: Cache::Memcached's rows (and
# ::Memcached's) with Cache::Memcached and its own parser, Fast's with Fast
# and its default gzip.
sub baseline_of { my ($id) = @_; return $id =~ /^fast-/ ? 'fast-gzip' : 'cm-perl' }

# {scale}{id}: rps (median of the rounds), rps_min, rps_max, p50, p99
# (medians, seconds), hit_rate, fetches_per_1000 (over all rounds), items
# (median), cpu_ms (the workers' CPU time per request, all rounds),
# rss_kib and pd_kib (the median worker after the last round),
# wrong, non2xx, socket_errors (sums); or { missing => why }.
sub summarize {
    my ($results, $configs, $scales) = @_;
    my %s;
    for my $scale (@$scales) {
        for my $c (@$configs) {
            if ($c->{missing}) { $s{$scale}{ $c->{id} } = { missing => $c->{missing} }; next }
            my @r = @{ $results->{$scale}{samples}{ $c->{id} } || [] } or next;
            my $sum = sub { my $k = shift; my $t = 0; $t += $_->{$k} // 0 for @r; $t };
            my $last = $r[-1];
            $s{$scale}{ $c->{id} } = {
                rounds => scalar @r,
                rps => median(map { $_->{rps} } @r),
                rps_min => (sort { $a <=> $b } map { $_->{rps} } @r)[0],
                rps_max => (sort { $b <=> $a } map { $_->{rps} } @r)[0],
                p50 => median(map { $_->{p50} } @r),
                p99 => median(map { $_->{p99} } @r),
                requests => $sum->('requests'),
                hit_rate => $sum->('keys') ? $sum->('hits') / $sum->('keys') : undef,
                fetches_per_1000 => $sum->('requests') ? 1000 * $sum->('fetches') / $sum->('requests') : undef,
                cpu_ms => $sum->('requests') ? 1000 * $sum->('worker_cpu') / $sum->('requests') : undef,
                memcached_cpu_ms => $sum->('requests') ? 1000 * $sum->('memcached_cpu') / $sum->('requests') : undef,
                items => median(map { $_->{items} } @r),
                evictions => $sum->('evictions'),
                prep => $results->{$scale}{prep}{ $c->{id} },
                rss_kib => median(map { $_->{rss} } @{ $last->{workers} }),
                pd_kib => median(map { $_->{private_dirty} } @{ $last->{workers} }),
                master_rss_kib => $last->{master}{rss},
                master_pd_kib => $last->{master}{private_dirty},
                load => [ map { $_->{load} // () } @r ],
                wrong => $sum->('wrong'), non2xx => $sum->('non2xx'), socket_errors => $sum->('socket_errors'),
            };
        }
        for my $id (keys %{ $s{$scale} }) {
            my ($r, $b) = ($s{$scale}{$id}, $s{$scale}{ baseline_of($id) });
            $r->{vs} = $r->{rps} / $b->{rps} if defined $r->{rps} && $b && $b->{rps};
        }
    }
    return \%s;
}

# The load averages seen during a scale's rounds: "median (lowest-highest)".
sub load_during {
    my ($s, $scale) = @_;
    my @l = sort { $a <=> $b } map { @{ $_->{load} || [] } } values %{ $s->{$scale} } or return '';
    return sprintf('%.1f (%.1f-%.1f)', median(@l), $l[0], $l[-1]);
}

sub _ms   { defined $_[0] ? sprintf('%.1f ms', 1000 * $_[0]) : '-' }
sub _mb   { defined $_[0] ? sprintf('%.1f MB', $_[0] / 1024) : '-' }
sub _pct  { defined $_[0] ? sprintf('%.1f %%', 100 * $_[0]) : '-' }

# The cells of a configuration's row.
sub _cells {
    my ($r) = @_;
    return ('not available: ' . $r->{missing}, ('') x 10) if $r->{missing};
    return (commas(sprintf '%.0f', $r->{rps}) . ($r->{rounds} > 1 ? sprintf(' (%s-%s)', commas(sprintf '%.0f', $r->{rps_min}), commas(sprintf '%.0f', $r->{rps_max})) : ''),
            defined $r->{vs} ? sprintf('%.2fx', $r->{vs}) : '-', _ms($r->{p50}), _ms($r->{p99}),
            defined $r->{cpu_ms} ? sprintf('%.2f ms', $r->{cpu_ms}) : '-', _pct($r->{hit_rate}),
            defined $r->{fetches_per_1000} ? commas(sprintf '%.0f', $r->{fetches_per_1000}) : '-',
            defined $r->{items} ? commas(sprintf '%.0f', $r->{items}) : '-', _mb($r->{rss_kib}), _mb($r->{pd_kib}),
            $r->{wrong} + $r->{non2xx});
}

my @HEAD = ('configuration', 'requests/s (min-max)', 'vs', 'p50', 'p99', 'worker CPU /req', 'hit rate', 'fetches /1,000 req',
            'items', 'worker RSS', 'Private_Dirty', 'wrong');

sub _describe {
    my ($meta, $scale) = @_;
    return sprintf('%s: Starman %d workers (--preload-app), wrk %d connections %d threads; %d keys a request, '
                 . 'Zipf(%s) over %s keys of real JSON (%s), %.1f ms per backend fetch; %d rounds of %s s, '
                 . 'configurations interleaved (the order rotates each round); median of the rounds',
        $meta->{scales}{$scale}{title}, $meta->{workers}, $meta->{connections}, $meta->{threads},
        $meta->{per_request}, $meta->{zipf}, commas($meta->{keys}), join('/', @{ $meta->{families} }),
        $meta->{fetch_ms}, $meta->{rounds}, $meta->{duration});
}

sub print_tables {
    my ($fh, $meta, $s, $configs, $scales) = @_;
    print $fh "Cache-Memcached-RustXS application benchmark  $meta->{date}\n";
    print $fh "perl $meta->{perl}, $meta->{machine}{cpu} ($meta->{machine}{cores} cores, $meta->{machine}{memory_mb} MB), "
            . "$meta->{machine}{os}; JSON: $meta->{json}; ", join(', ', map { "$_ " . ($meta->{versions}{$_} // 'absent') } sort keys %{ $meta->{versions} }), "\n";
    for my $scale (@$scales) {
        print $fh "\n== ", _describe($meta, $scale), " ==\n";
        my $load = load_during($s, $scale);
        print $fh "  the machine's load average (1 minute) during the rounds: $load\n" if $load;
        my @rows = map { [ $_->{label} . ($s->{$scale}{ $_->{id} }{missing} ? '' : ''), _cells($s->{$scale}{ $_->{id} }) ] }
                   grep { $s->{$scale}{ $_->{id} } } @$configs;
        my @w;
        for my $r (\@HEAD, @rows) { for (0 .. $#$r) { $w[$_] = length $r->[$_] if !defined $w[$_] || length $r->[$_] > $w[$_] } }
        for my $r (\@HEAD, @rows) {
            print $fh '  ', join('  ', map { $_ ? sprintf('%*s', $w[$_], $r->[$_]) : sprintf('%-*s', $w[$_], $r->[$_]) } 0 .. $#$r), "\n";
        }
        my @prep = map { my $p = $s->{$scale}{ $_->{id} }{prep}; $p ? "$_->{id} " . commas($p->{items}) . ($scale eq 'memory' ? ' items, ' . commas($p->{evictions}) . ' evictions' : ' items') : () } @$configs;
        print $fh "  before the rounds: @{[ join '; ', @prep ]}\n" if @prep;
    }
    print $fh "\nvs: requests/s against Cache::Memcached with its own parser (Cache::Memcached and ::Memcached rows) "
            . "or Fast with its default gzip (Fast rows). Worker CPU /req: the CPU time (user and system) the workers used per request, "
            . "which other load on the machine changes less than requests/s. Worker RSS and Private_Dirty: the median worker after the last round. "
            . (defined $meta->{contexts_kib} ? "A worker's own zstd contexts for the set: $meta->{contexts_kib} KiB "
               . "(Private_Dirty a forked child adds compressing and decompressing with each dictionary). " : '')
            . "wrong: values read back unequal to the value set, or not decoding to its shape, and failed requests (must be 0).\n";
    return;
}

# The application benchmark's goals, as far as the run has their configurations: a list
# of { text, value, met (1, 0, undef) }.
sub evaluate_bars {
    my ($s, $meta) = @_;
    my @bars;
    my $ok = sub { my ($r) = @_; $r && !$r->{missing} && defined $r->{rps} };
    my $push = sub { my ($text, $met, $value) = @_; push @bars, { text => $text, met => $met, value => $value } };
    if (my $m = $s->{memory}) {
        my ($set, $gz) = @$m{qw(fast-set fast-gzip)};
        if ($ok->($set) && $ok->($gz)) {
            my $r = $set->{rps} / $gz->{rps};
            $push->('memory-bound: Fast with the set (one object) at least 1.5x the requests/s of Fast\'s default gzip',
                    $r >= 1.5 ? 1 : 0, sprintf('%.2fx (%.0f vs %.0f)', $r, $set->{rps}, $gz->{rps}));
            $push->('memory-bound: its p99 lower', $set->{p99} < $gz->{p99} ? 1 : 0,
                    sprintf('%s vs %s', _ms($set->{p99}), _ms($gz->{p99})));
            my $f = $gz->{fetches_per_1000} ? $set->{fetches_per_1000} / $gz->{fetches_per_1000} : undef;
            $push->('memory-bound: at most 0.6x its backend fetches', defined $f ? ($f <= 0.6 ? 1 : 0) : undef,
                    defined $f ? sprintf('%.2fx (%.0f vs %.0f per 1,000 requests)', $f, $set->{fetches_per_1000}, $gz->{fetches_per_1000}) : 'no fetches');
        }
    }
    if (my $h = $s->{hit}) {
        for my $ours (qw(cm-ours cm-ours-override)) {
            my ($o, $p, $x) = @$h{ $ours, qw(cm-perl cm-xs) };
            next unless $ok->($o);
            my $name = $ours eq 'cm-ours' ? 'our parser' : 'our parser + override';
            $push->("hit-bound: Cache::Memcached with $name at least 1.3x the requests/s of its own parser",
                    ($o->{rps} / $p->{rps} >= 1.3 ? 1 : 0), sprintf('%.2fx (%.0f vs %.0f)', $o->{rps} / $p->{rps}, $o->{rps}, $p->{rps}))
                if $ok->($p);
            $push->("hit-bound: ... and more than with GetParserXS", ($o->{rps} > $x->{rps} ? 1 : 0),
                    sprintf('%.2fx (%.0f vs %.0f)', $o->{rps} / $x->{rps}, $o->{rps}, $x->{rps}))
                if $ok->($x);
        }
        for my $fast (qw(fast-zlib fast-set)) {
            my ($f, $g) = @$h{ $fast, 'fast-gzip' };
            next unless $ok->($f) && $ok->($g);
            $push->('hit-bound: Fast with ' . ($fast eq 'fast-zlib' ? 'our Zlib methods' : 'the set') . ' more requests/s than with its default gzip',
                    ($f->{rps} > $g->{rps} ? 1 : 0), sprintf('%.2fx (%.0f vs %.0f)', $f->{rps} / $g->{rps}, $f->{rps}, $g->{rps}));
        }
    }
    # Private_Dirty: the set loaded before the fork against the same
    # client without it (Fast with our Zlib methods); ::Memcached's own
    # client without a set reads gzip through our parser, whose workers
    # differ in their own way, so its row is shown, not judged.
    for my $scale (grep { $s->{$_} } qw(memory hit)) {
        my ($set, $plain, $late) = @{ $s->{$scale} }{qw(fast-set fast-zlib fast-set-late)};
        if ($ok->($set) && $ok->($plain) && defined $meta->{contexts_kib}) {
            my $grows = $set->{pd_kib} - $plain->{pd_kib};
            $push->("$scale-bound: a Fast worker's Private_Dirty with the set loaded before the fork at most its own "
                    . 'contexts above that of Fast with our Zlib methods',
                    $grows <= $meta->{contexts_kib} ? 1 : 0,
                    sprintf('%+d KiB (%s vs %s; contexts %d KiB)%s', $grows, _mb($set->{pd_kib}), _mb($plain->{pd_kib}),
                            $meta->{contexts_kib},
                            $ok->($late) ? sprintf('; the set loaded in each worker: %+d KiB', $late->{pd_kib} - $plain->{pd_kib}) : ''));
        }
        my ($cmrx, $cmrx_late) = @{ $s->{$scale} }{qw(cmrx-set cmrx-set-late)};
        if ($ok->($cmrx) && $ok->($cmrx_late)) {
            $push->("$scale-bound: (shown, not judged) a ::Memcached worker's Private_Dirty with the set loaded before the fork "
                    . 'and in each worker', undef, sprintf('%s and %s', _mb($cmrx->{pd_kib}), _mb($cmrx_late->{pd_kib})));
        }
    }
    return @bars;
}

# The tables in Markdown, as the README shows them.
sub write_markdown {
    my ($path, $meta, $s, $configs, $scales, $bars) = @_;
    open my $fh, '>:encoding(UTF-8)', $path or die "$path: $!\n";
    for my $scale (@$scales) {
        my $load = load_during($s, $scale);
        print $fh "\n", _describe($meta, $scale), ($load ? "; the machine's load average during the rounds $load" : ''), ":\n\n";
        print $fh '| ', join(' | ', @HEAD), " |\n";
        print $fh '|', join('|', '---', map { '--:' } 1 .. $#HEAD), "|\n";
        for my $c (grep { $s->{$scale}{ $_->{id} } } @$configs) {
            my @cells = _cells($s->{$scale}{ $c->{id} });
            s/\|/\\|/g for @cells;
            print $fh '| ', join(' | ', $c->{label}, @cells), " |\n";
        }
    }
    print $fh "\nBars:\n\n", map { sprintf "- %s %s: %s\n", (!defined $_->{met} ? '—' : $_->{met} ? '✓' : '✗'), $_->{text}, $_->{value} } @$bars;
    close $fh or die "$path: $!\n";
    return;
}

# ---- SVG ---------------------------------------------------------------------------------


# Two panels per scale: requests/s (the bar the median, the line the
# lowest and highest round) and p99 latency, a row per configuration;
# green: this distribution's parts, grey: the stock clients.
sub write_svg {
    my ($path, $meta, $s, $configs, $scales) = @_;
    my ($lw, $pw1, $gap, $pw2, $rh, $top) = (340, 330, 90, 220, 20, 78);
    my (@body, $max_rps, $max_p99);
    for my $scale (@$scales) {
        for my $r (grep { !$_->{missing} && defined $_->{rps} } values %{ $s->{$scale} }) {
            $max_rps = $r->{rps_max} if !defined $max_rps || $r->{rps_max} > $max_rps;
            $max_p99 = $r->{p99} if !defined $max_p99 || $r->{p99} > $max_p99;
        }
    }
    $max_rps ||= 1;
    $max_p99 ||= 1;
    # An axis of 3 to 6 round steps past the largest value: (end, step).
    my $axis = sub {
        my ($v) = @_;
        my $p = 10**int(log($v) / log(10) - 1);
        for my $step (map { $_ * $p } 1, 2, 2.5, 5, 10, 20, 25, 50, 100) {
            my $n = int($v / $step) + 1;
            return ($n * $step, $step) if $n <= 6;
        }
    };
    my ($rps_step, $p99_step);
    ($max_rps, $rps_step) = $axis->($max_rps);
    ($max_p99, $p99_step) = map { $_ / 1000 } $axis->($max_p99 * 1000);
    my $x1 = $lw;
    my $x2 = $lw + $pw1 + $gap;
    my $y = $top;
    for my $scale (@$scales) {
        my $load = load_during($s, $scale);
        push @body, sprintf('<text x="8" y="%d" class="g">%s</text>', $y + 14,
                            svg_escape($meta->{scales}{$scale}{title} . ($load ? "; the machine's load average $load" : '')));
        $y += $rh + 2;
        my $y0 = $y;
        for my $c (grep { $s->{$scale}{ $_->{id} } } @$configs) {
            my $r = $s->{$scale}{ $c->{id} };
            my $cy = $y + $rh / 2;
            push @body, sprintf('<text x="%d" y="%.1f" class="l">%s</text>', $lw - 8, $cy + 4, svg_escape($c->{label}));
            if ($r->{missing} || !defined $r->{rps}) {
                push @body, sprintf('<text x="%d" y="%.1f" class="na">not available</text>', $x1 + 4, $cy + 4);
                $y += $rh;
                next;
            }
            my $class = $c->{stock} ? 'stock' : 'ours';
            my $w = $r->{rps} / $max_rps * $pw1;
            push @body, sprintf('<rect x="%d" y="%d" width="%.1f" height="%d" class="%s"/>', $x1, $y + 3, $w, $rh - 6, $class);
            push @body, sprintf('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="r"/>', $x1 + $r->{rps_min} / $max_rps * $pw1,
                                $x1 + $r->{rps_max} / $max_rps * $pw1, $cy, $cy) if $r->{rounds} > 1;
            push @body, sprintf('<text x="%.1f" y="%.1f" class="v">%s%s</text>', $x1 + ($r->{rps_max} / $max_rps * $pw1 > $w ? $r->{rps_max} / $max_rps * $pw1 : $w) + 4,
                                $cy + 4, commas(sprintf '%.0f', $r->{rps}), defined $r->{vs} && $r->{vs} != 1 ? sprintf(' (%.2fx)', $r->{vs}) : '');
            my $w2 = $r->{p99} / $max_p99 * $pw2;
            push @body, sprintf('<rect x="%d" y="%d" width="%.1f" height="%d" class="%s"/>', $x2, $y + 3, $w2, $rh - 6, $class);
            push @body, sprintf('<text x="%.1f" y="%.1f" class="v">%.1f ms</text>', $x2 + $w2 + 4, $cy + 4, 1000 * $r->{p99});
            $y += $rh;
        }
        for (my $v = 0; $v <= $max_rps * 1.0001; $v += $rps_step) {
            my $ax = $x1 + $v / $max_rps * $pw1;
            push @body, sprintf('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" class="grid"/>', $ax, $ax, $y0, $y);
            push @body, sprintf('<text x="%.1f" y="%d" class="a">%s</text>', $ax, $y + 13, commas(sprintf '%.0f', $v));
        }
        for (my $v = 0; $v <= $max_p99 * 1.0001; $v += $p99_step) {
            my $bx = $x2 + $v / $max_p99 * $pw2;
            push @body, sprintf('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" class="grid"/>', $bx, $bx, $y0, $y);
            push @body, sprintf('<text x="%.1f" y="%d" class="a">%s</text>', $bx, $y + 13, sprintf('%g', 1000 * $v));
        }
        $y += 28;
    }
    my $w = $x2 + $pw2 + 70;
    my $h = $y + 6;
    my $title = svg_escape("Cache-Memcached-RustXS: a PSGI app under Starman, every configuration in one run ($meta->{date})");
    my $sub1 = svg_escape(sprintf('Starman %d workers (--preload-app), wrk %d connections; %d keys a request, Zipf(%s) over %s keys of real JSON, '
                          . '%.1f ms a backend fetch; %s, %s', $meta->{workers}, $meta->{connections}, $meta->{per_request}, $meta->{zipf},
                            commas($meta->{keys}), $meta->{fetch_ms}, "perl $meta->{perl}", "$meta->{machine}{cores} cores"));
    my $sub2 = svg_escape(sprintf('bar: median of %d interleaved rounds of %s s, line: lowest to highest round; green: this distribution, grey: the stock clients',
                            $meta->{rounds}, $meta->{duration}));
    my $h1 = svg_escape('requests/s (higher is better; vs the stock client)');
    my $h2 = svg_escape('p99 latency, ms (lower is better)');
    write_svg_file($path, $w, $h,
        ".a{font-size:10px;text-anchor:middle;fill:#555}.h{font-size:12px;fill:#222}\n"
      . '.ours{fill:#3a9a4a}.stock{fill:#8a9bb0}.grid{stroke:#ddd;stroke-width:1}.r{stroke:#000;stroke-width:1.2}',
        qq(<text x="8" y="20" font-size="14" font-weight="bold">$title</text>),
        qq(<text x="8" y="37" font-size="10.5" fill="#555">$sub1</text>),
        qq(<text x="8" y="51" font-size="10.5" fill="#555">$sub2</text>),
        qq(<text x="$x1" y="70" class="h">$h1</text>),
        qq(<text x="$x2" y="70" class="h">$h2</text>),
        @body);
    return;
}

1;
