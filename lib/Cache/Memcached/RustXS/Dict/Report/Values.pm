package Cache::Memcached::RustXS::Dict::Report::Values;

# The output of cmrx-dict report and train, the commands on a cache's (or
# files') sampled values: what is stored, and how gzip, zstd and a
# dictionary do on the held-out half; as text and as the data --json
# prints.

use strict;
use warnings;

use Exporter 5.57 'import';

use Cache::Memcached::RustXS::Dict qw(ratio);
use Cache::Memcached::RustXS::Dict::Measure ();
use Cache::Memcached::RustXS::Dict::Report qw(table shown text percent fixed us_pair plural skipped_reasons
                                              by_node print_nodes json_true json_false);

our $VERSION = '1.000';

our @EXPORT_OK = qw(report_data rest_data train_data source_data print_report print_train);

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
            held_out => $h, by_node($g),
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
        rest_data($opt{listing}),
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

# The prefixes summed in one row (keys that start with an ID: more
# prefixes listed than --max-prefixes), when there are.
sub rest_data {
    my ($listing) = @_;
    my $rest = $listing->{rest} or return ();
    return (rest => { prefixes => $rest->{prefixes}, listed_prefixes => $rest->{seen_prefixes},
                      max_prefixes => $listing->{max_prefixes}, keys => $rest->{keys},
                      item_bytes => $rest->{item_bytes}, unfetchable => $rest->{unfetchable},
                      examples => [ map { text($_) } @{ $rest->{examples} } ] });
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
        undecodable => $g->{undecodable}, skipped => { %{ $g->{skip_reasons} } }, by_node($g),
    };
}

# ---- as text ----------------------------------------------------------------------

sub print_report {
    my ($fh, $report) = @_;
    my @prefixes = @{ $report->{prefixes} };
    my $rest = $report->{rest};
    printf {$fh} "cmrx-dict report of %s: %d keys listed, %d prefix%s (delimiter '%s')%s, up to %d sampled each\n",
        shown($report->{server}), $report->{keys}, scalar @prefixes, (@prefixes == 1 ? '' : 'es'), shown($report->{delimiter}),
        ($rest ? " and $rest->{prefixes} more summed in one row" : ''), $report->{sample};
    if (!@prefixes) {
        print {$fh} "\nNo keys to report on.\n";
        return;
    }

    print {$fh} "\nStored (item bytes: all keys, as listed; the rest: the sampled values, as fetched)\n";
    table($fh, [qw(prefix keys), 'item bytes', qw(sampled), 'stored bytes', qw(compressed storable skipped)],
          (map { [ shown($_->{prefix}), $_->{keys}, $_->{item_bytes}, $_->{sampled}, $_->{stored_bytes},
                   percent($_->{compressed}, $_->{fetched}), percent($_->{storable}, $_->{fetched}),
                   $_->{gone} + $_->{undecodable} ] } @prefixes),
          ($rest ? [ "(the other $rest->{prefixes})", $rest->{keys}, $rest->{item_bytes}, (0, '-', '-', '-', 0) ] : ()));
    print {$fh} "  (the other $rest->{prefixes}: keys that start with an ID, such as ",
          join(', ', map { shown($_) } @{ $rest->{examples} }), "; not sampled)\n" if $rest;
    print_nodes($fh, $report->{server}, map { [ shown($_->{prefix}), $_ ] } @prefixes);

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
        print_nodes($fh, $s->{server}, [ shown($s->{prefix}), $s ]);
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

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Report::Values - the output of cmrx-dict report and train, as text or as data for JSON

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::Measure qw(measure_held_out);
    use Cache::Memcached::RustXS::Dict::Report qw(print_json);
    use Cache::Memcached::RustXS::Dict::Report::Values qw(report_data print_report);

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

What L<cmrx-dict>'s C<report> and C<train> found, first as data (what
C<--json> prints), then printed as the tables its manual describes. The
groups of a report come from L<Cache::Memcached::RustXS::Dict::Sample>
(C<fetch_values> fills their counts), their C<held_out> measures from
L<Cache::Memcached::RustXS::Dict::Measure>; the tables and text are
L<Cache::Memcached::RustXS::Dict::Report>'s.

=head1 FUNCTIONS

Exported on request: C<report_data>, C<rest_data>, C<train_data>, C<source_data>,
C<print_report>, C<print_train>.

=over 4

=item report_data(server => $spec, delimiter => ':', sample => 1000, dictionary_size => undef, memory => $model, listing => $listing, groups => \@groups)

The data of a report: the options it ran with (C<dictionary_size> the
size C<--size> fixed, else C<undef>: tuned; C<classes_from>, the memory
model's slab classes, when C<memory> is given), the C<keys> and
C<unfetchable> counts of the listing, one entry in C<prefixes> per group
(in the order given: cmrx-dict sorts them by item bytes, largest first)
with its counts, skip reasons and C<held_out> measures, and the C<total>
over the groups (the dictionary's totals over the groups that have one).

=item rest_data($listing)

C<< (rest => { prefixes, listed_prefixes, max_prefixes, keys, item_bytes,
unfetchable, examples }) >>: the prefixes a listing summed in one row
(more were listed than C<--max-prefixes>), or nothing.

=item train_data(source => \%source, values => \@values, sample_bytes => $n, dictionary_size => undef, held_out => $measures, file => $path, dictionary => $bytes, id => $id, choice => { method, size, level, k, d })

The data of a training; C<choice> (the tuner's method, size asked and
level, and cover's C<k> and C<d>) goes into C<dictionary>, and the text
names it. C<%source> is either C<< { server => $spec,
prefix, delimiter, group => $group } >> or C<< { files, stdin, empty } >>
(as L<Cache::Memcached::RustXS::Dict::Files/read_sample_files(\@args, null =E<gt> 0)>
counts them).

=item source_data(\%source)

The C<source> part of C<train_data>: the counts of the prefix's group, or
of the files.

=item print_report($fh, $report), print_train($fh, $training)

Prints the data as cmrx-dict's tables and notes to C<$fh>.

=back

=head1 SEE ALSO

L<cmrx-dict>: its manual describes each table of C<report> and
C<train>. L<Cache::Memcached::RustXS::Dict::Measure> measures what the
held-out tables show.

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
