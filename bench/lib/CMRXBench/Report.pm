package CMRXBench::Report;

# Turns finished rows into ratios and bar verdicts, then prints the table,
# writes the JSON results and draws the SVG chart of the ratios. The
# verdicts are shown only when the run judges ($meta->{check}, run.pl's
# --check): a user's run reports times and ratios, a developer's judges.

use strict;
use warnings;
use utf8;
use Exporter 'import';

our @EXPORT_OK = qw(evaluate print_table write_json write_svg fmt_time svg_escape write_svg_file bar_counts);

# ---- ratios and bars -------------------------------------------------------

sub _ours      { (grep { $_->{role} eq 'ours' } @{ $_[0]{impls} })[0] }
sub _baselines { grep { $_->{role} ne 'ours' } @{ $_[0]{impls} } }
sub _ok        { $_[0] && ($_[0]{status} // '') eq 'ok' }

# Adds to each row: ratios {label => baseline/ours}, ratio (vs the primary
# baseline), size_ratios {label => ours/baseline output size}, size_ratio
# (vs the primary), and per bar: met, why. A bar with `vs => LABEL` is
# judged against that baseline instead of the primary one.
sub evaluate {
    my (@rows) = @_;
    for my $row (@rows) {
        my $ours = _ours($row);
        my @base = _baselines($row);
        my $prim = $base[0];
        $row->{ratios} = {};
        for my $b (@base) {
            $row->{ratios}{ $b->{label} } = $b->{median} / $ours->{median}
                if _ok($b) && _ok($ours) && $ours->{median} > 0;
        }
        $row->{ratio} = $row->{ratios}{ $prim->{label} };
        my $size = sub { my $i = shift; $i && $i->{info} ? $i->{info}{size} : undef };
        $row->{size_ratios} = {};
        for my $b (@base) {
            my ($bs, $os) = ($size->($b), $size->($ours));
            $row->{size_ratios}{ $b->{label} } = $os / $bs if defined $bs && defined $os && $bs > 0;
        }
        $row->{size_ratio} = $row->{size_ratios}{ $prim->{label} };

        for my $bar (@{ $row->{bars} || [] }) {
            my $k = $bar->{kind};
            my $vs = defined $bar->{vs} ? $bar->{vs} : $prim->{label};
            my $v = $k eq 'max_us' ? (_ok($ours) ? $ours->{median} * 1e6 : undef)
                  : $k eq 'size'   ? $row->{size_ratios}{$vs}
                  :                  $row->{ratios}{$vs};
            $bar->{value} = $v;
            if (!defined $v) {
                # ours wrong or failing misses its bar; not built or a broken
                # baseline leaves it open
                $bar->{met} = ($ours->{status} // '') =~ /^(WRONG|FAILED)$/ ? 0 : undef;
                $bar->{why} = !_ok($ours) ? ($ours->{status} // 'not run')
                            : "$prim->{label} " . ($prim->{status} // 'not run');
                next;
            }
            $bar->{met} = $k eq 'max_us' ? ($v < $bar->{max} ? 1 : 0)
                        : $k eq 'size'   ? ($v <= $bar->{max} ? 1 : 0)
                        : $k eq 'noloss' ? ($v >= $bar->{allow} ? 1 : 0)
                        :                  ($v >= $bar->{min} ? 1 : 0);
        }
    }
    return @rows;
}

sub bar_text {
    my ($bar) = @_;
    my $k = $bar->{kind};
    my $vs = defined $bar->{vs} ? " vs $bar->{vs}" : '';
    return $k eq 'max_us' ? "<$bar->{max} µs"
         : $k eq 'size'   ? "size ≤$bar->{max}×$vs"
         : $k eq 'noloss' ? ($bar->{name} // 'no loss') . " (≥$bar->{allow}×)$vs"
         :                  "≥$bar->{min}×$vs";
}

sub _mark { !defined $_[0] ? '—' : $_[0] ? '✓' : '✗' }

# A bar and its verdict; a bar measured twice (a miss, then the row again)
# shows its first value too, so that noise stays visible.
sub _verdict {
    my ($bar) = @_;
    my $text = bar_text($bar) . ' ' . _mark($bar->{met});
    $text .= sprintf ' (measured twice; first %s)', fmt_ratio_or_value($bar, $bar->{first_value})
        if defined $bar->{first_value};
    return $text;
}

sub fmt_ratio_or_value {
    my ($bar, $v) = @_;
    return $bar->{kind} eq 'max_us' ? sprintf('%.1f µs', $v) : fmt_ratio($v);
}

# Counts of the bars: met (of them, met when measured again), missed, and
# not evaluated.
sub bar_counts {
    my (@rows) = @_;
    my %n = (met => 0, met_again => 0, missed => 0, not_evaluated => 0);
    for my $bar (map { @{ $_->{bars} || [] } } @rows) {
        my $k = !defined $bar->{met} ? 'not_evaluated' : $bar->{met} ? 'met' : 'missed';
        $n{$k}++;
        $n{met_again}++ if $k eq 'met' && defined $bar->{first_value};
    }
    return \%n;
}

sub summary_line {
    my (@rows) = @_;
    my $n = bar_counts(@rows);
    return sprintf "bars: %d met (%d on a second measurement), %d missed, %d not evaluated\n",
        @$n{qw(met met_again missed not_evaluated)};
}

# ---- formatting ------------------------------------------------------------

sub fmt_time {
    my ($s) = @_;
    return '' unless defined $s;
    my ($v, $u) = $s >= 1    ? ($s, 's')
                : $s >= 1e-3 ? ($s * 1e3, 'ms')
                : $s >= 1e-6 ? ($s * 1e6, 'µs')
                :              ($s * 1e9, 'ns');
    return sprintf('%.*f %s', ($v >= 100 ? 0 : $v >= 10 ? 1 : 2), $v, $u);
}

sub fmt_ratio { defined $_[0] ? sprintf('%.2f×', $_[0]) : '—' }

sub _cell {
    my ($impl) = @_;
    return fmt_time($impl->{median}) if _ok($impl);
    return $impl->{status} // 'not run';
}

# ---- table -----------------------------------------------------------------

sub print_table {
    my ($fh, $meta, $groups, @rows) = @_;
    print $fh "Cache-Memcached-RustXS benchmark  $meta->{date}\n";
    print $fh "perl $meta->{perl}, $meta->{machine}{cpu} ($meta->{machine}{cores} cores), memcached at $meta->{servers_desc}\n";
    print $fh "$meta->{rounds} interleaved rounds × ~$meta->{seconds} s per implementation; median time per op; ratio = baseline / ours (>1: ours faster)\n";
    my $judge = $meta->{check};
    for my $g (@$groups) {
        my @gr = grep { $_->{group} eq $g->{id} } @rows or next;
        my @blab = map { $_->{label} } _baselines($gr[0]);
        my $ours_label = _ours($gr[0])->{label};
        my @head = ('', @blab, $ours_label, (map { "vs $_" } @blab), ($judge ? 'bar' : ''), $g->{notes_title} // '');
        my (@lines, @foot);
        for my $row (@gr) {
            my @b = _baselines($row);
            my $o = _ours($row);
            my @bars = $judge ? map { _verdict($_) } @{ $row->{bars} || [] } : ();
            push @lines, [
                $row->{label},
                (map { _cell($_) } @b),
                _cell($o),
                (map { fmt_ratio($row->{ratios}{ $_->{label} }) } @b),
                join('  ', @bars),
                $row->{notes} ? $row->{notes}->($row) : '',
            ];
            for my $impl (@{ $row->{impls} }) {
                next unless ($impl->{status} // '') =~ /^(WRONG|FAILED)$/;
                push @foot, "$row->{label}, $impl->{label}: $impl->{status}: $impl->{detail}";
            }
        }
        my @w = map { my $i = $_; _max(map { length $_->[$i] } \@head, @lines) } 0 .. $#head;
        my $fmt = sub {
            my @c = @_;
            my $s = sprintf('  %-*s', $w[0], $c[0]);
            $s .= sprintf('  %*s', $w[$_], $c[$_]) for 1 .. $#c - 2;
            $s .= sprintf('  %-*s  %s', $w[-2], $c[-2], $c[-1]);
            $s =~ s/\s+$//;
            "$s\n";
        };
        print $fh "\n== $g->{title} ==\n";
        print $fh $fmt->(@head);
        print $fh $fmt->(@$_) for @lines;
        print $fh "  ! $_\n" for @foot;
    }
    print $fh "\n", summary_line(@rows) if $judge;
}

sub _max { my $m = shift; for (@_) { $m = $_ if $_ > $m } $m }

# ---- JSON ------------------------------------------------------------------

# Returns '' once written, or why it was not: JSON::PP is core only since
# perl 5.14 (older perls need it from CPAN).
sub write_json {
    my ($path, $meta, @rows) = @_;
    eval { require JSON::PP; 1 }
        or return 'JSON::PP is not installed (core since perl 5.14; install it from CPAN)';
    my @out;
    for my $row (@rows) {
        push @out, {
            name   => $row->{name},
            group  => $row->{group},
            label  => $row->{label},
            impls  => [ map {
                my $i = $_;
                +{
                    label => $i->{label},
                    role  => $i->{role},
                    status => $i->{status},
                    (defined $i->{detail} && $i->{status} ne 'ok' ? (detail => $i->{detail}) : ()),
                    (_ok($i) ? (
                        median_seconds => $i->{median},
                        iterations     => $i->{iterations},
                        samples        => $i->{samples},
                    ) : ()),
                    ($i->{info} && %{ $i->{info} } ? (info => $i->{info}) : ()),
                }
            } @{ $row->{impls} } ],
            medians       => { map { _ok($_) ? ($_->{label} => $_->{median}) : () } @{ $row->{impls} } },
            ratios        => $row->{ratios},
            ($meta->{check} ? (bars_met => _row_met($row)) : ()),
            primary_ratio => $row->{ratio},
            (defined $row->{size_ratio} ? (size_ratio => $row->{size_ratio}) : ()),
            bars => [ map {
                +{ kind => $_->{kind}, text => bar_text($_), target => $_->{min} // $_->{max},
                   (defined $_->{allow} ? (allow => $_->{allow}) : ()),
                   value => $_->{value},
                   (defined $_->{first_value} ? (first_value => $_->{first_value}) : ()),
                   ($meta->{check} ? (
                       met => defined $_->{met} ? ($_->{met} ? JSON::PP::true() : JSON::PP::false()) : undef,
                       (defined $_->{why} ? (not_evaluated => $_->{why}) : ()),
                   ) : ()) }
            } @{ $row->{bars} || [] } ],
        };
    }
    my %doc = (%$meta, ($meta->{check} ? (bars_summary => bar_counts(@rows)) : ()), rows => \@out);
    open my $fh, '>:raw', $path or die "$path: $!\n";
    print $fh JSON::PP->new->utf8->canonical->pretty->encode(\%doc);
    close $fh or die "$path: $!\n";
    return '';
}

# true: every bar met; false: one missed; null: no bar, or one not evaluated
sub _row_met {
    my ($row) = @_;
    my @b = @{ $row->{bars} || [] } or return undef;
    return JSON::PP::false() if grep { defined $_->{met} && !$_->{met} } @b;
    return undef if grep { !defined $_->{met} } @b;
    return JSON::PP::true();
}

# ---- SVG -------------------------------------------------------------------

sub svg_escape { my $s = shift; $s =~ s/&/&amp;/g; $s =~ s/</&lt;/g; $s =~ s/>/&gt;/g; $s =~ s/"/&quot;/g; $s }

# The benchmarks' charts: an SVG file $w x $h on white, the text classes
# every chart uses and $style's own, then @elements (lines of SVG).
sub write_svg_file {
    my ($path, $w, $h, $style, @elements) = @_;
    open my $fh, '>:encoding(UTF-8)', $path or die "$path: $!\n";
    print $fh <<"SVG";
<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="$w" height="$h" viewBox="0 0 $w $h" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">
<style>
.g{font-size:13px;font-weight:bold;fill:#222}.l{font-size:12px;text-anchor:end;fill:#222}.v{font-size:11px;fill:#222}
.na{font-size:11px;fill:#888;font-style:italic}$style
</style>
<rect width="100%" height="100%" fill="#fff"/>
@{[ join "\n", @elements ]}
</svg>
SVG
    close $fh or die "$path: $!\n";
    return;
}

sub write_svg {
    my ($path, $meta, $groups, @rows) = @_;
    my ($lw, $pw, $rh, $top) = (230, 560, 22, 56);
    my $log2 = sub { log($_[0]) / log(2) };

    # log2 scale covering the ratios and the targets: at least 1/4 .. 8,
    # at most 1/16 .. 64 (bars beyond are clipped, the value column says it)
    my ($lo, $hi) = (0.25, 8);
    for my $row (@rows) {
        my @v = grep { defined && $_ > 0 } $row->{ratio}, map { $_->{kind} =~ /^(ratio|noloss)$/ ? $_->{min} : () } @{ $row->{bars} || [] };
        for (@v) { $lo = $_ / 1.3 if $_ / 1.3 < $lo; $hi = $_ * 1.3 if $_ * 1.3 > $hi }
    }
    $lo = 2**int($log2->($lo) - ($lo < 1 ? 0.999 : 0));
    $hi = 2**int($log2->($hi) + 0.999);
    $lo = 1 / 16 if $lo < 1 / 16;
    $hi = 64 if $hi > 64;
    my $x = sub { my $v = shift; $v = $lo if $v < $lo; $v = $hi if $v > $hi; $lw + ($log2->($v) - $log2->($lo)) / ($log2->($hi) - $log2->($lo)) * $pw };

    my @body;
    my $y = $top;
    for my $g (@$groups) {
        my @gr = grep { $_->{group} eq $g->{id} } @rows or next;
        push @body, sprintf('<text x="8" y="%d" class="g">%s</text>', $y + 15, svg_escape($g->{title}));
        $y += $rh;
        for my $row (@gr) {
            my $cy = $y + $rh / 2;
            push @body, sprintf('<text x="%d" y="%d" class="l">%s</text>', $lw - 8, $cy + 4, svg_escape($row->{label}));
            my @rb = $meta->{check} ? grep { $_->{kind} ne 'size' } @{ $row->{bars} || [] } : ();
            my $met = @rb ? $rb[0]{met} : undef;
            my $class = !@rb ? 'nb' : !defined $met ? 'nb' : $met ? 'ok' : 'bad';
            if (defined(my $r = $row->{ratio})) {
                my ($x1, $x2) = sort { $a <=> $b } $x->(1), $x->($r);
                push @body, sprintf('<rect x="%.1f" y="%d" width="%.1f" height="%d" class="%s"/>', $x1, $y + 4, _max($x2 - $x1, 1), $rh - 8, $class);
                my $extra = '';
                $extra = sprintf(' (ours %s, %s %s)', fmt_time(_ours($row)->{median}), bar_text($rb[0]), _mark($met))
                    if @rb && $rb[0]{kind} eq 'max_us';
                push @body, sprintf('<text x="%.1f" y="%d" class="v">%s</text>', $x->($hi) + 16, $cy + 4, svg_escape(fmt_ratio($r) . $extra));
                push @body, sprintf('<text x="%.1f" y="%d" class="v">%s</text>', $x2 + 2, $cy + 4, '»') if $r > $hi;
                push @body, sprintf('<text x="%.1f" y="%d" class="v" text-anchor="end">%s</text>', $x1 - 2, $cy + 4, '«') if $r < $lo;
            } else {
                my $why = join ', ', map { "$_->{label} $_->{status}" } grep { !_ok($_) } @{ $row->{impls} };
                push @body, sprintf('<text x="%.1f" y="%d" class="na">%s</text>', $x->($hi) + 16, $cy + 4, svg_escape($why || 'no ratio'));
            }
            for my $bar (@rb) {
                next unless $bar->{kind} =~ /^(ratio|noloss)$/;
                my $tx = $x->($bar->{kind} eq 'noloss' ? $bar->{allow} : $bar->{min});
                push @body, sprintf('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" class="t"/>', $tx, $tx, $y + 1, $y + $rh - 1);
            }
            $y += $rh;
        }
    }
    my $h = $y + 34;
    my @axis;
    for (my $v = $lo; $v <= $hi * 1.0001; $v *= 2) {
        my $ax = $x->($v);
        push @axis, sprintf('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" class="%s"/>', $ax, $ax, $top, $y, $v == 1 ? 'one' : 'grid');
        push @axis, sprintf('<text x="%.1f" y="%d" class="a">%s×</text>', $ax, $y + 16, $v >= 1 ? $v : '1/' . (1 / $v));
    }
    my $w = $lw + $pw + 300;
    my $title = svg_escape("Cache-Memcached-RustXS: speed ratio baseline/ours (log scale), $meta->{date}");
    my $sub = svg_escape("perl $meta->{perl}, $meta->{rounds} rounds; "
        . ($meta->{check} ? 'green: bar met, red: missed, grey: no bar or not evaluated; black tick: target'
                          : 'ratio of the primary baseline\'s time to ours; right of the 1.0 line: ours faster'));
    write_svg_file($path, $w, $h,
        ".a{font-size:11px;text-anchor:middle;fill:#555}\n"
      . '.ok{fill:#3a9a4a}.bad{fill:#c8453a}.nb{fill:#8a9bb0}.grid{stroke:#ddd;stroke-width:1}.one{stroke:#000;stroke-width:1.5}' . "\n"
      . '.t{stroke:#000;stroke-width:2.5}',
        qq(<text x="8" y="20" font-size="15" font-weight="bold">$title</text>),
        qq(<text x="8" y="38" font-size="11" fill="#555">$sub</text>),
        @axis, @body);
    return;
}

1;
