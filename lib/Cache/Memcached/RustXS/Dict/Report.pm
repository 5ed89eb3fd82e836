package Cache::Memcached::RustXS::Dict::Report;

use strict;
use warnings;

use Exporter 5.57 'import';

use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Dict qw(ratio @BASELINES);
use Cache::Memcached::RustXS::Dict::Measure ();

my $CANDIDATES_SHOWN = 8;    # a tuning's candidates printed, the choice always
my %BASELINE_LABEL = (gzip => 'gzip (ours)', zstd => 'zstd -3');    # in the train table

our $VERSION = '1.000';

our @EXPORT_OK = qw(report_data train_data print_report print_train print_json
                    print_train_all print_report_set set_data
                    skipped_note shown text plural duration_text prefix_text
                    table aligned_table json_true json_false);

# ---- the data -------------------------------------------------------------------

sub report_data {
    my (%opt) = @_;
    my @prefixes;
    my %total = map { ($_ => 0) } qw(values raw_bytes memGzip zstd zstd_dict dict_raw dict_memGzip);
    for my $g (@{ $opt{groups} }) {
        my $h = $g->{held_out};
        my %prefix = (
            prefix => text($g->{prefix}), delimited => $g->{delimited} ? json_true() : json_false(),
            keys => $g->{keys}, item_bytes => $g->{item_bytes}, unfetchable => $g->{unfetchable},
            sampled => scalar @{ $g->{sample} }, fetched => $g->{fetched}, gone => $g->{gone},
            stored_bytes => $g->{stored_bytes}, compressed => $g->{compressed},
            compressed_share => ratio($g->{compressed}, $g->{fetched}),
            storable => $g->{storable}, undecodable => $g->{undecodable},
            skipped => { %{ $g->{skip_reasons} } },
            values => $g->{values}, raw_bytes => $g->{raw_bytes},
            held_out => $h, _by_node($g),
        );
        push @prefixes, \%prefix;
        next unless $h->{values};
        $total{values}    += $h->{values};
        $total{raw_bytes} += $h->{raw_bytes};
        $total{memGzip}   += $h->{memGzip}{bytes};
        $total{zstd}      += $h->{zstd}{bytes};
        if ($h->{zstd_dict}) {    # dictionary totals only where there is one
            $total{zstd_dict} += $h->{zstd_dict}{bytes};
            $total{dict_raw}  += $h->{raw_bytes};
            $total{dict_memGzip} += $h->{memGzip}{bytes};
        }
    }
    return {
        command => 'report',
        server => text($opt{server}),
        delimiter => text($opt{delimiter}),
        sample => $opt{sample},
        dictionary_size => $opt{dictionary_size},
        dictionary => 'tuned per prefix as train --all tunes (method, size and zstd level that take least '
                    . 'memcached memory over the prefix\'s keys, the dictionary\'s bytes included), on the '
                    . 'values at even positions',
        ($opt{memory} ? (classes_from => $opt{memory}->classes_from) : ()),
        zstd_level => $Cache::Memcached::RustXS::Dict::Measure::ZSTD_LEVEL,
        memGzip => 'Compress::Zlib::memGzip (level 9)',
        held_out => 'each prefix\'s sample in key order: sizes and times on the values at odd '
                  . 'positions (2nd, 4th, ...); the dictionary is tuned and trained on those at even positions (1st, 3rd, ...)',
        keys => $opt{listing}{keys},
        unfetchable => $opt{listing}{unfetchable},
        prefixes => \@prefixes,
        total => {
            values => $total{values}, raw_bytes => $total{raw_bytes},
            memGzip_bytes => $total{memGzip}, zstd_bytes => $total{zstd},
            zstd_ratio => ratio($total{zstd}, $total{memGzip}),
            zstd_dict_bytes => $total{zstd_dict},
            zstd_dict_raw_bytes => $total{dict_raw}, zstd_dict_memGzip_bytes => $total{dict_memGzip},
            zstd_dict_ratio => ratio($total{zstd_dict}, $total{dict_memGzip}),
        },
    };
}

sub train_data {
    my (%opt) = @_;
    my $values = $opt{values};
    return {
        command => 'train',
        source  => source_data($opt{source}),
        samples => scalar @$values,
        sample_bytes => $opt{sample_bytes},
        dictionary_size => defined $opt{dictionary_size} ? 0 + $opt{dictionary_size} : undef,
        zstd_level => $Cache::Memcached::RustXS::Dict::Measure::ZSTD_LEVEL,
        held_out => $opt{held_out},
        dictionary => { file => text($opt{file}), bytes => length $opt{dictionary}, id => $opt{id},
                        trained_on => scalar @$values, training_bytes => $opt{sample_bytes},
                        %{ $opt{choice} || {} } },
    };
}

sub source_data {
    my ($s) = @_;
    return { files => $s->{files}, stdin => $s->{stdin}, empty => $s->{empty} } unless $s->{server};
    my $g = $s->{group};
    return {
        server => text($s->{server}), prefix => text($s->{prefix}), delimiter => text($s->{delimiter}),
        keys => $g->{keys}, item_bytes => $g->{item_bytes}, sampled => scalar @{ $g->{sample} },
        fetched => $g->{fetched}, gone => $g->{gone}, unfetchable => $g->{unfetchable},
        stored_bytes => $g->{stored_bytes}, compressed => $g->{compressed}, storable => $g->{storable},
        undecodable => $g->{undecodable}, skipped => { %{ $g->{skip_reasons} } }, _by_node($g),
    };
}

# A pool's spread of a group: its keys, sampled keys and values on each
# node.
sub _by_node {
    my ($g) = @_;
    return () unless $g && $g->{keys_by_node};
    return (keys_by_node => [ @{ $g->{keys_by_node} } ], sampled_by_node => [ @{ $g->{sampled_by_node} } ],
            values_by_node => [ @{ $g->{values_by_node} || [] } ]);
}

# From a pool: how many keys each node listed of each prefix, and how many
# values of its sample each gave (keys / values), so that a node that
# gave none, or few, shows.
sub _print_nodes {
    my ($fh, $spec, @groups) = @_;
    @groups = grep { $_->[1] && $_->[1]{keys_by_node} } @groups;
    return unless @groups;
    my @nodes = split /, /, $spec;
    my $n = @{ $groups[0][1]{keys_by_node} };
    @nodes = map { "node $_" } 1 .. $n unless @nodes == $n;
    print {$fh} "
Nodes (keys listed / values sampled, of each prefix)
";
    table($fh, [ 'prefix', map { shown($_) } @nodes ],
          map { my ($name, $g) = @$_;
                [ $name, map { sprintf '%d / %d', $g->{keys_by_node}[$_] || 0, ($g->{values_by_node} || [])->[$_] || 0 }
                         0 .. $n - 1 ] } @groups);
    return;
}

# ---- as text ----------------------------------------------------------------------

sub print_report {
    my ($fh, $report) = @_;
    my @prefixes = @{ $report->{prefixes} };
    printf {$fh} "cmrx-dict report of %s: %d keys listed, %d prefix%s (delimiter '%s'), up to %d sampled each\n",
        shown($report->{server}), $report->{keys}, scalar @prefixes, (@prefixes == 1 ? '' : 'es'), shown($report->{delimiter}), $report->{sample};
    if (!@prefixes) {
        print {$fh} "\nNo keys to report on.\n";
        return;
    }

    print {$fh} "\nStored (item bytes: all keys, as listed; the rest: the sampled values, as fetched)\n";
    table($fh, [qw(prefix keys), 'item bytes', qw(sampled), 'stored bytes', qw(compressed storable skipped)],
          map { [ shown($_->{prefix}), $_->{keys}, $_->{item_bytes}, $_->{sampled}, $_->{stored_bytes},
                  percent($_->{compressed}, $_->{fetched}), percent($_->{storable}, $_->{fetched}),
                  $_->{gone} + $_->{undecodable} ] } @prefixes);
    _print_nodes($fh, $report->{server}, map { [ shown($_->{prefix}), $_ ] } @prefixes);

    print {$fh} "\nHeld-out half, bytes: each prefix's sample in key order, the values at odd positions\n",
          "(2nd, 4th, ...), each compressed alone; the dictionary is tuned (as train --all tunes) and\n",
          "trained on the values at even positions (1st, 3rd, ...)\n";
    my @rows;
    for my $p (@prefixes) {
        my $h = $p->{held_out};
        if (!$h->{values}) {
            push @rows, [ shown($p->{prefix}), 0, ('-') x 7 ];
            next;
        }
        my $d = $h->{zstd_dict};
        push @rows, [ shown($p->{prefix}), $h->{values}, $h->{raw_bytes}, $h->{memGzip}{bytes}, $h->{zstd}{bytes},
                      ($d ? $d->{bytes} : '-'), fixed(ratio($h->{zstd}{bytes}, $h->{memGzip}{bytes})),
                      ($d ? fixed(ratio($d->{bytes}, $h->{memGzip}{bytes})) : '-'),
                      ($d ? fixed(ratio($d->{bytes}, $h->{raw_bytes})) : '-') ];
    }
    my $t = $report->{total};
    push @rows, [ 'total', $t->{values}, $t->{raw_bytes}, $t->{memGzip_bytes}, $t->{zstd_bytes},
                  $t->{zstd_dict_bytes}, fixed($t->{zstd_ratio}), fixed($t->{zstd_dict_ratio}),
                  fixed(ratio($t->{zstd_dict_bytes}, $t->{zstd_dict_raw_bytes})) ] if @prefixes > 1;
    table($fh, [qw(prefix values raw), 'gzip -9', 'zstd -3', 'zstd+dict', 'zstd/gzip', 'dict/gzip', 'dict/raw'],
          @rows);

    my @tuned = grep { $_->{held_out}{zstd_dict} } @prefixes;
    if (@tuned) {
        print {$fh} "\nDictionaries tuned on the even half (zstd+dict above): the method, size and level that take\n",
              "least memcached memory over the prefix's keys plus the dictionary's bytes\n";
        table($fh, [ 'prefix', 'method', 'size asked', 'bytes', 'level', 'keys counted' ],
              map { my $d = $_->{held_out}{zstd_dict};
                    [ shown($_->{prefix}), map { defined $_ ? $_ : '-' }
                      @{$d}{qw(method size dictionary_bytes level keys_counted)} ] } @tuned);
    }

    print {$fh} "\nHeld-out half, microseconds per value (compress / decompress)\n";
    table($fh, [qw(prefix), 'gzip -9', 'zstd -3', 'zstd+dict'],
          map { my $h = $_->{held_out};
                $h->{values}
                    ? [ shown($_->{prefix}), map { $h->{$_} ? us_pair($h->{$_}) : '-' } qw(memGzip zstd zstd_dict) ]
                    : [ shown($_->{prefix}), ('-') x 3 ] } @prefixes);

    my @notes;
    for my $p (@prefixes) {
        my @what = skipped_reasons($p);
        push @what, $p->{held_out}{zstd_dict_error} if $p->{held_out}{zstd_dict_error};
        push @what, $p->{held_out}{zstd_dict_refused} if $p->{held_out}{zstd_dict_refused};
        push @what, 'a single value: no held-out half' if $p->{values} == 1;
        push @notes, '  ' . shown($p->{prefix}) . ': ' . join('; ', @what) if @what;
    }
    print {$fh} "\nNotes\n", map { "$_\n" } @notes if @notes;
    return;
}

sub print_train {
    my ($fh, $training) = @_;
    my $s = $training->{source};
    if (defined $s->{server}) {
        my $n = 0;
        $n += $s->{$_} for qw(gone undecodable unfetchable);
        printf {$fh} "cmrx-dict train: prefix '%s' of %s: %d keys listed, %d sampled, %d values (%d bytes), %d skipped\n",
            shown($s->{prefix}), shown($s->{server}), $s->{keys}, $s->{sampled}, $training->{samples}, $training->{sample_bytes}, $n;
        my @why = skipped_reasons($s);
        print {$fh} "  skipped: ", join('; ', @why), "\n" if @why;
        _print_nodes($fh, $s->{server}, [ shown($s->{prefix}), $s ]);
    } else {
        printf {$fh} "cmrx-dict train: %d samples (%d bytes): %s%s\n", $training->{samples}, $training->{sample_bytes},
            join(', ', ($s->{files} ? plural($s->{files}, 'file') : ()),
                       ($s->{stdin} ? plural($s->{stdin}, 'sample') . ' from standard input' : ())),
            ($s->{empty} ? ', ' . plural($s->{empty}, 'empty sample') . ' skipped' : '');
    }
    my $h = $training->{held_out};
    print {$fh} "\nHeld-out check: a dictionary tuned on the $h->{trained_on} values at even positions (1st, 3rd, ...),\n",
          "measured with gzip and zstd on the $h->{values} values at odd positions (2nd, 4th, ...), each\n",
          "compressed alone\n";
    if (!$h->{values}) {
        print {$fh} "  not measured: a single value has no held-out half\n";
    } else {
        my @rows = ([ 'raw', $h->{raw_bytes}, '1.000' ]);
        for (['gzip -9', 'memGzip'], ['zstd -3', 'zstd'], ['zstd+dict', 'zstd_dict']) {
            my ($label, $k) = @$_;
            my $c = $h->{$k};
            push @rows, $c ? [ $label, $c->{bytes}, fixed(ratio($c->{bytes}, $h->{raw_bytes})),
                               fixed(ratio($c->{bytes}, $h->{memGzip}{bytes})),
                               sprintf('%.1f', $c->{us_compress}), sprintf('%.1f', $c->{us_decompress}) ]
                           : [ $label, ('-') x 5 ];
        }
        table($fh, [ '', 'bytes', 'of raw', 'of gzip', 'us compress', 'us decompress' ], @rows);
        print {$fh} "  no held-out dictionary: $h->{zstd_dict_error}\n" if $h->{zstd_dict_error};
        print {$fh} "  note: $h->{zstd_dict_refused}\n" if $h->{zstd_dict_refused};
    }
    my $d = $training->{dictionary};
    print {$fh} "\nWrote ", shown($d->{file}), ": a zstd dictionary of $d->{bytes} bytes, ID $d->{id}, trained on all ",
          "$d->{trained_on} values ($d->{training_bytes} bytes)\n";
    printf {$fh} "  tuned: %s, %d bytes asked, for zstd level %d (compress with that level)\n",
        $d->{method}, $d->{size}, $d->{level} if defined $d->{method};
    printf {$fh} "  note: the samples are %.1f times the dictionary size; zstd advises about 100 times%s\n",
        $d->{training_bytes} / $d->{bytes}, (defined $s->{server} ? ' (--sample takes more keys)' : '')
        if $d->{bytes} && $d->{training_bytes} < 10 * $d->{bytes};
    return;
}

# What of a group (or a train source) was skipped, and why.
sub skipped_reasons {
    my ($g) = @_;
    my @what;
    push @what, plural($g->{unfetchable}, 'key') . ' a text-protocol get cannot name' if $g->{unfetchable};
    push @what, plural($g->{gone}, 'key') . ' gone before they were fetched' if $g->{gone};
    push @what, plural($g->{skipped}{$_}, 'value') . " $_" for sort keys %{ $g->{skipped} };
    return @what;
}

# " (N keys gone; N values why)" for a group that lost values, else ''.
sub skipped_note {
    my ($g) = @_;
    my $n = $g->{gone} + $g->{undecodable};
    return '' unless $n;
    return ' (' . join('; ', ($g->{gone} ? plural($g->{gone}, 'key') . ' gone' : ()),
                       map { plural($g->{skip_reasons}{$_}, 'value') . " $_" } sort keys %{ $g->{skip_reasons} })
         . ')';
}

# Columns: the first left-aligned, the others right-aligned.
sub table {
    my ($fh, $head, @rows) = @_;
    return aligned_table($fh, 'l' . 'r' x $#$head, $head, @rows);
}

# Columns aligned as $align says, a letter each: l (left) or r (right).
sub aligned_table {
    my ($fh, $align, @rows) = @_;
    my @width;
    for my $row (@rows) {
        for my $i (0 .. $#$row) {
            my $l = length $row->[$i];
            $width[$i] = $l if !defined $width[$i] || $l > $width[$i];
        }
    }
    for my $row (@rows) {
        my @cells = map { sprintf(substr($align, $_, 1) eq 'r' ? '%*s' : '%-*s', $width[$_], $row->[$_]) }
                    0 .. $#$row;
        (my $line = join '  ', @cells) =~ s/\s+\z//;
        print {$fh} "  $line\n";
    }
    return;
}

# A string of the data as printed: the distribution's escaper, under the
# name cmrx-dict's modules import.
*shown = \&Cache::Memcached::RustXS::_printable;

# A string of bytes for JSON (which is UTF-8): as characters when the bytes
# are UTF-8, else each byte a character.
sub text {
    my ($bytes) = @_;
    utf8::decode($bytes);
    return $bytes;
}

sub percent {
    my ($x, $of) = @_;
    return '-' unless $of;
    return sprintf '%d%%', int(100 * $x / $of + 0.5);
}

sub us_pair { sprintf "%.1f / %.1f", $_[0]{us_compress}, $_[0]{us_decompress} }

sub fixed { defined $_[0] ? sprintf('%.3f', $_[0]) : '-' }

sub plural {
    my ($n, $word, $words) = @_;
    return "$n " . ($n == 1 ? $word : defined $words ? $words : "${word}s");
}

# ---- dictionary sets: train --all and report --dictionaries ----------------------------

sub print_train_all {
    my ($fh, $result) = @_;
    my @rows = map {
        my $e = $_->{entry};
        [ _decided_name($_), $_->{action}, $e ? ($e->{id}, $e->{file}, $e->{level}, $e->{size}) : ('-') x 4,
          defined $_->{why} ? $_->{why} : '' ]
    } _print_decided($fh, "cmrx-dict train --all into $result->{dir}", $result);
    print {$fh} "\nThe set\n";
    table($fh, [ 'prefix', 'action', 'ID', 'file', 'level', 'bytes', 'why' ], @rows);
    _print_nodes($fh, $result->{source_spec} || '', map { [ _decided_name($_), $_->{group} ] } @{ $result->{prefixes} });
    if (defined $result->{current_from}) {
        print {$fh} $result->{stage} > 0
            ? sprintf("Staged: current from %s (--stage %s): readers load the added dictionaries at once, "
                      . "writers use them from then.\n", $result->{current_from}, duration_text($result->{stage}))
            : sprintf("Current from %s, at once (--stage 0): writers use the added dictionaries as soon as "
                      . "they read the set.\n", $result->{current_from});
    }
    my $f = $result->{fallback};
    printf {$fh} "\nKeys without a dictionary get %s level %d (measured on %d values of %s: %d bytes of memory, "
               . "memGzip's %d)\n", $f->{method}, $f->{level}, $f->{samples}, $f->{measured_on} || 'the sample',
        $f->{memory} || 0, $f->{memGzip_memory} || 0;
    if (my $w = $result->{whole_cache}) {
        printf {$fh} "The whole-cache entry (prefix '', for writers that cannot see keys) was tuned on %d values "
                   . "pooled by each prefix's keys (%s)%s\n", $w->{pairs} || 0, _shares($w->{shares}),
            $w->{other_keys} ? sprintf('; keys of prefixes without a dictionary get %s (%d bytes of memory on %d %s, '
                                       . "the fallback's %d)", ($w->{other_keys}{use} ? 'it' : 'the fallback'),
                                       @{ $w->{other_keys} }{qw(memory values measured_on fallback_memory)}) : '';
    }
    return;
}

sub print_report_set {
    my ($fh, $result) = @_;
    my @rows = map {
        my $c = $_->{current};
        my $choice = $_->{tuned} && $_->{tuned}{choice};
        [ _decided_name($_),
          $c ? "ID $c->{id}, level $c->{level}" : '-',
          $c && defined $c->{memory} ? $c->{memory} : '-',
          $choice ? $choice->{memory} : '-',
          defined $_->{gain_over_current} ? "$_->{gain_over_current} %" : '-',
          $_->{verdict} . (defined $_->{why} ? ": $_->{why}" : '') ]
    } _print_decided($fh, "cmrx-dict report on the dictionary set in $result->{dir}", $result);
    print {$fh} "\nPrefixes (memory of the held-out values; retrain when a fresh dictionary takes at least "
              . "$result->{if_better} % less)\n";
    table($fh, [ 'prefix', 'current', 'memory', 'fresh', 'fresh saves', 'verdict' ], @rows);
    print {$fh} "\nDictionaries (how many sampled values name each)\n";
    table($fh, [ 'ID', 'prefix', 'state', 'file', 'named by', '' ],
          (map { [ $_->{id}, prefix_text($_->{prefix}), $_->{state},
                   $_->{file}, $_->{named_by}, $_->{named_by} ? '' : 'no sampled value names it' ] }
               @{ $result->{dictionaries} }),
          (map { [ $_->{id}, '-', 'not in the set', '-', $_->{named_by}, 'load it to read these values' ] }
               @{ $result->{other_ids} }));
    my $f = $result->{fallback};
    printf {$fh} "\nKeys without a dictionary get %s level %d\n", $f->{method}, $f->{level};
    return;
}

# The head of a set command's text and each decided prefix's tuning;
# returns the decided prefixes, the whole cache last.
sub _print_decided {
    my ($fh, $title, $result) = @_;
    printf {$fh} "%s: %s sampled; memory as %s\n", $title,
        plural(scalar @{ $result->{prefixes} }, 'prefix', 'prefixes'), _memory_note($result->{memory});
    my @all = (@{ $result->{prefixes} }, $result->{whole_cache} ? $result->{whole_cache} : ());
    _print_choices($fh, \@all);
    return @all;
}

sub _memory_note {
    my ($memory) = @_;
    return sprintf "memcached's (%s: %s)", $memory->classes_from,
        join(' ', ($memory->chunk_sizes)[0 .. 5]) . ' ... byte chunks';
}

# The name of a decided prefix, as printed.
sub _decided_name {
    my ($p) = @_;
    return prefix_text('') if $p->{whole_cache};
    return shown(defined $p->{set_prefix} ? $p->{set_prefix} : $p->{group}{prefix});
}

sub _shares {
    my ($shares) = @_;
    return join ', ', map { shown($_) . " $shares->{$_}" } sort { $shares->{$b} <=> $shares->{$a} || $a cmp $b }
                      keys %$shares;
}

sub _ratio_text { my ($base, $x) = @_; $x ? sprintf('%.3fx', $base / $x) : '-' }
sub _us_text    { defined $_[0] ? sprintf('%.1f', $_[0]) : '' }

# Per decided prefix: the tuner's choice and the alternatives it beat.
sub _print_choices {
    my ($fh, $prefixes) = @_;
    for my $p (@$prefixes) {
        my $t = $p->{tuned} or next;
        my $name = $p->{whole_cache} ? "prefix '' (the whole cache, every prefix pooled)"
                                     : "prefix '" . _decided_name($p) . "'";
        my $base = $t->{baseline};
        printf {$fh} "\n%s: %d values sampled (of %d keys), %d trained on, %d held out (%d bytes)\n",
            $name, $t->{samples}, $p->{group}{keys}, $t->{trained_on}, $t->{held_out}, $t->{held_out_bytes} || 0;
        if (!$base) {
            print {$fh} "  no dictionary: $t->{no_dictionary}\n";
            next;
        }
        my $gzip_memory = $base->{memGzip}{memory};
        my @rows = map { [ $BASELINE_LABEL{$_} || $_, $base->{$_}{memory}, $base->{$_}{items}, $base->{$_}{bytes},
                           _ratio_text($gzip_memory, $base->{$_}{memory}),
                           _us_text($base->{$_}{us_compress}), _us_text($base->{$_}{us_decompress}), '' ] }
                   @BASELINES;
        if (my $c = $p->{current}) {
            push @rows, [ "current ID $c->{id}, level $c->{level}", $c->{memory}, $c->{items}, $c->{bytes},
                          _ratio_text($gzip_memory, $c->{memory}), '', '', 'the set has it' ];
        }
        my $shown = 0;
        for my $c (@{ $t->{candidates} || [] }) {
            last if $shown++ >= $CANDIDATES_SHOWN && $c->{verdict} ne 'chosen';
            push @rows, [ sprintf('%s %d (%d B), level %d', $c->{method}, $c->{size}, $c->{dictionary_bytes}, $c->{level}),
                          $c->{memory}, $c->{items}, $c->{bytes}, _ratio_text($gzip_memory, $c->{memory}),
                          _us_text($c->{us_compress}), _us_text($c->{us_decompress}), $c->{verdict} ];
        }
        table($fh, [ 'held out, as', 'memory', 'items held', 'bytes', 'vs memGzip', 'us compress', 'us decompress', '' ],
              map { [ map { defined $_ ? $_ : '-' } @$_ ] } @rows);
        if (defined $t->{keys} && $t->{choice}) {
            my $c = $t->{choice};
            printf {$fh} "  ranked by memory over the prefix's %d keys plus the dictionary's bytes: the choice %d + %d "
                       . "= %d bytes, without a dictionary %d\n", $t->{keys}, $c->{keys_memory}, $c->{cost_bytes},
                $c->{cost}, $base->{cost};
        }
        print {$fh} "  no dictionary: $t->{no_dictionary}\n" if $t->{no_dictionary};
    }
    return;
}

sub set_data {
    my ($result) = @_;
    my @prefixes = map { _decided_data($_) } @{ $result->{prefixes} };
    my %data = (command => $result->{command}, dir => $result->{dir}, prefixes => \@prefixes,
                if_better => $result->{if_better}, fallback => { %{ $result->{fallback} } },
                slab_chunk_sizes => [ $result->{memory}->chunk_sizes ],
                classes_from => $result->{memory}->classes_from);
    delete $data{fallback}{tried};
    $data{fallback}{tried} = [ map { +{ %$_ } } @{ $result->{fallback}{tried} } ] if $result->{fallback}{tried};
    $data{$_} = $result->{$_} for grep { defined $result->{$_} } qw(stage current_from);
    $data{dictionaries} = $result->{dictionaries} if $result->{dictionaries};
    $data{other_ids} = $result->{other_ids} if $result->{other_ids};
    $data{set} = [ $result->{set}->entries ];
    if (my $w = $result->{whole_cache}) {
        $data{whole_cache} = _decided_data($w);
        $data{whole_cache}{shares} = { %{ $w->{shares} || {} } };
        $data{whole_cache}{pooled} = $w->{pairs} if defined $w->{pairs};
        $data{whole_cache}{other_keys} = { %{ $w->{other_keys} } } if $w->{other_keys};
    }
    return \%data;
}

# A decided prefix as data: the decision, and the tuning behind it.
sub _decided_data {
    my ($p) = @_;
    my $g = $p->{group};
    my %data = (prefix => text(defined $p->{set_prefix} ? $p->{set_prefix} : $g->{prefix}));
    $data{$_} = $p->{$_} for grep { defined $p->{$_} } qw(outcome action state verdict why gain_over_current);
    $data{keys} = $g->{keys} if $g;
    %data = (%data, _by_node($g));
    $data{entry} = $p->{entry} if $p->{entry};
    if (my $c = $p->{current}) {
        $data{current} = { map { ($_ => $c->{$_}) } grep { defined $c->{$_} } qw(id level file memory items bytes savings) };
    }
    my $t = $p->{tuned} or return \%data;
    $data{$_} = $t->{$_} for grep { defined $t->{$_} } qw(samples trained_on training_bytes held_out held_out_bytes
                                                          no_dictionary cost_model);
    $data{keys_counted} = $t->{keys} if defined $t->{keys};
    if (my $base = $t->{baseline}) {
        $data{baseline} = { map { my $x = $base->{$_}; ($_ => _defined_fields($x, qw(memory items bytes us_compress us_decompress))) }
                            @BASELINES };
        $data{baseline}{cost} = $base->{cost} if defined $base->{cost};
    }
    $data{candidates} = [ map { _defined_fields($_, qw(method size dictionary_bytes k d level memory items bytes cost
                                                      keys_memory cost_bytes us_compress us_decompress
                                                      memGzip_us_compress gzip_us_decompress verdict)) }
                          @{ $t->{candidates} || [] } ];
    ($data{choice}) = grep { $_->{verdict} eq 'chosen' } @{ $data{candidates} } if $t->{choice};
    return \%data;
}

sub _defined_fields {
    my ($hash, @names) = @_;
    return { map { defined $hash->{$_} ? ($_ => $hash->{$_}) : () } @names };
}

# A set's prefix as printed: its bytes, or '' (the whole cache).
sub prefix_text {
    my ($prefix) = @_;
    return length $prefix ? shown($prefix) : "'' (the whole cache)";
}

# A duration as people read it, in its two largest units: "9d 2h", "36h"
# is "1d 12h", "5m 3s", "42s".
sub duration_text {
    my ($seconds) = @_;
    my $s = int($seconds + 0.5);
    $s = 0 if $s < 0;
    my @units = ([ d => 86400 ], [ h => 3600 ], [ m => 60 ], [ s => 1 ]);
    for my $i (0 .. $#units - 1) {
        my ($unit, $size) = @{ $units[$i] };
        next if $s < $size;
        my ($next, $next_size) = @{ $units[ $i + 1 ] };
        my $rest = int(($s % $size) / $next_size);
        return int($s / $size) . $unit . ($rest ? " $rest$next" : '');
    }
    return "${s}s";
}

# ---- as JSON --------------------------------------------------------------------------

sub json_true  { $INC{'JSON/PP.pm'} ? JSON::PP::true()  : 1 }
sub json_false { $INC{'JSON/PP.pm'} ? JSON::PP::false() : 0 }

sub print_json {
    my ($fh, $data) = @_;
    require JSON::PP;
    print {$fh} JSON::PP->new->utf8->canonical->pretty->encode($data);
    return;
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Report - the output of cmrx-dict: every subcommand's result as text tables or as data for JSON

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::Measure qw(measure_held_out);
    use Cache::Memcached::RustXS::Dict::Report qw(report_data print_report print_json);

    my @values = map { qq({"id":$_,"name":"user$_","plan":"free"}) } 1 .. 300;
    my $group = {
        prefix => 'user', delimited => 1, keys => 300, item_bytes => 30_000, unfetchable => 0,
        sample => [ 1 .. 300 ], fetched => 300, gone => 0, stored_bytes => 12_000,
        compressed => 0, storable => 0, undecodable => 0, skip_reasons => {},
        values => 300, raw_bytes => 11_000,
        held_out => measure_held_out(\@values, size => 4096),
    };
    my $report = report_data(server => '127.0.0.1:11211', delimiter => ':', sample => 1000,
                             dictionary_size => 4096, listing => { keys => 300, unfetchable => 0 },
                             groups => [$group]);
    print_report(\*STDOUT, $report);
    print_json(\*STDOUT, $report) if eval { require JSON::PP; 1 };

=head1 DESCRIPTION

The output of L<cmrx-dict>, every subcommand's: what C<report> and
C<train> found, first as data (what C<--json> prints), then printed as the
tables its manual describes; and the results of C<train --all>, C<report
--dictionaries> (L<Cache::Memcached::RustXS::Dict::SetTrainer>),
C<prune> (L<Cache::Memcached::RustXS::Dict::Prune>), C<list> and
C<rollback> (L<Cache::Memcached::RustXS::Dict::Rollout>), as text or as
data.
The groups of a plain report come from
L<Cache::Memcached::RustXS::Dict::Sample> (C<fetch_values> fills their
counts), their C<held_out> measures from
L<Cache::Memcached::RustXS::Dict::Measure>.

Strings in the data are as JSON wants them: prefixes and file names whose
bytes are UTF-8 as characters, any other byte as the character of that
code; the text output prints their bytes, control bytes escaped (C<\x0A>).

=head1 FUNCTIONS

Exported on request: C<report_data>, C<train_data>, C<print_report>,
C<print_train>, C<print_json>, C<print_train_all>, C<print_report_set>,
C<set_data>, C<print_prune>, C<prune_data>, C<print_list>, C<list_data>,
C<print_rollback>, C<rollback_data>, C<skipped_note>, C<shown>, C<text>,
C<plural>, C<duration_text>, C<prefix_text>.

=over 4

=item report_data(server => $spec, delimiter => ':', sample => 1000, dictionary_size => undef, memory => $model, listing => $listing, groups => \@groups)

The data of a report: the options it ran with (C<dictionary_size> the
size C<--size> fixed, else C<undef>: tuned; C<classes_from>, the memory
model's slab classes, when C<memory> is given), the C<keys> and
C<unfetchable> counts of the listing, one entry in C<prefixes> per group
(in the order given: cmrx-dict sorts them by item bytes, largest first)
with its counts, skip reasons and C<held_out> measures, and the C<total>
over the groups (the dictionary's totals over the groups that have one).

=item train_data(source => \%source, values => \@values, sample_bytes => $n, dictionary_size => undef, held_out => $measures, file => $path, dictionary => $bytes, id => $id, choice => { method, size, level, k, d })

The data of a training; C<choice> (the tuner's method, size asked and
level, and cover's C<k> and C<d>) goes into C<dictionary>, and the text
names it. C<%source> is either C<< { server => $spec,
prefix, delimiter, group => $group } >> or C<< { files, stdin, empty } >>
(as L<Cache::Memcached::RustXS::Dict::Files/read_sample_files(\@args, null =E<gt> 0)>
counts them).

=item print_report($fh, $report), print_train($fh, $training)

Prints the data as cmrx-dict's tables and notes to C<$fh>.

=item print_json($fh, $data)

Prints the data as canonical, pretty JSON (needs JSON::PP, part of perl
from 5.14).

=item print_train_all($fh, $result), print_report_set($fh, $result), set_data($result)

The result of C<train_all> or C<report_set>
(L<Cache::Memcached::RustXS::Dict::SetTrainer/FUNCTIONS>) as text (per prefix the held-out memory of the
baselines, the tuner's choice and the alternatives it beat, then the set
and what was done, or the verdicts and the IDs sampled values name), or
as data for JSON (per prefix its C<outcome>, C<action> or C<verdict>,
C<why>, the baselines and the candidates; C<whole_cache> with its
C<shares>; the C<fallback>; the set's entries).

=item print_prune, prune_data, print_list, list_data, print_rollback, rollback_data

The output of C<prune>, C<list>, C<rollback> and C<history>:
L<Cache::Memcached::RustXS::Dict::Report::Set>.

=item skipped_note($group)

C<" (2 keys gone; 1 value gzip that does not decompress)"> for a group
that lost values between listing and decoding, else C<''>.

=item shown($string), text($bytes)

A string as printed (its bytes, control bytes escaped), and a string of
bytes as JSON's data (UTF-8 decoded where it is UTF-8).

=item source_data(\%source)

The C<source> part of C<train_data>: the counts of the prefix's group, or
of the files.

=item skipped_reasons($group)

What of a group (or a training's source) was skipped and why, one phrase
each: C<"2 keys gone before they were fetched">, ...

=back

The pieces of the tables, for reports of the same look:

=over 4

=item table($fh, \@head, @rows), aligned_table($fh, $alignment, @rows)

Prints rows of cells under a head, indented by two spaces, the first
column left-aligned and the others right-aligned, each as wide as its
widest cell; or rows aligned as C<$alignment> says, a letter a column,
C<l> (left) or C<r> (right): C<'rllr'>.

=item percent($x, $of), fixed($ratio), us_pair($measure), plural($n, $word, $words)

C<"33%"> (C<-> of nothing), C<"0.412"> (C<-> for C<undef>),
C<"12.5 / 3.1"> (microseconds to compress / decompress), C<"1 value"> /
C<"2 values"> (C<$words> the plural when it is not C<$word> and C<s>:
C<plural(2, 'prefix', 'prefixes')>).

=item prefix_text($prefix)

A set's prefix as printed: its bytes (L</shown($string), text($bytes)>),
or C<'' (the whole cache)> for the empty one.

=item duration_text($seconds)

Seconds as people read them, in the two largest units: C<9d 2h>, C<1d 12h>,
C<5m 3s>, C<42s>.

=item json_true, json_false

JSON::PP's booleans when it is loaded (C<--json>), else 1 and 0.

=back

=head1 SEE ALSO

L<cmrx-dict>, L<JSON::PP>.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
