package Cache::Memcached::RustXS::Dict::Report::Dictionaries;

# The output of cmrx-dict train --all and report --dictionaries, the
# commands that tune a dictionary set (Dict::SetTrainer): per prefix the
# tuner's choice and what it beat, then the set or the verdicts; as text
# and as the data --json prints.

use strict;
use warnings;

use Exporter 5.57 'import';

use Cache::Memcached::RustXS::Dict qw(@BASELINES);
use Cache::Memcached::RustXS::Dict::Report qw(table shown text plural prefix_text duration_text
                                              by_node print_nodes);

my $CANDIDATES_SHOWN = 8;    # a tuning's candidates printed, the choice always
my %BASELINE_LABEL = (gzip => 'gzip (ours)', zstd => 'zstd -3');    # in the tables

our $VERSION = '1.000';

our @EXPORT_OK = qw(print_train_all print_report_set set_data);

# ---- as text ----------------------------------------------------------------------

sub print_train_all {
    my ($fh, $result) = @_;
    my @rows = map {
        my $e = $_->{entry};
        [ _decided_name($_), $_->{action}, $e ? ($e->{id}, $e->{file}, $e->{level}, $e->{size}) : ('-') x 4,
          defined $_->{why} ? $_->{why} : '' ]
    } _print_decided($fh, "cmrx-dict train --all into $result->{dir}", $result);
    print {$fh} "\nThe set\n";
    table($fh, [ 'prefix', 'action', 'ID', 'file', 'level', 'bytes', 'why' ], @rows);
    print_nodes($fh, $result->{source_spec} || '', map { [ _decided_name($_), $_->{group} ] } @{ $result->{prefixes} });
    if (defined $result->{current_from}) {
        print {$fh} $result->{stage} > 0
            ? sprintf("Staged: current from %s (--stage %s): writers use the added dictionaries from then: "
                      . "ship the set to every host before.\n", $result->{current_from}, duration_text($result->{stage}))
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
    $data{set} = [ map { +{ %{ $_->{entry} }, state => $_->{state}, since => $_->{since} } }
                   grep { $_->{state} ne 'removed' } $result->{set}->schedule ];
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
    %data = (%data, by_node($g));
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

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Report::Dictionaries - the output of cmrx-dict train --all and report --dictionaries, as text or as data for JSON

=head1 SYNOPSIS

    use File::Temp ();
    use Cache::Memcached::RustXS::Dict::Files;
    use Cache::Memcached::RustXS::Dict::SlabModel;
    use Cache::Memcached::RustXS::Dict::SetTrainer qw(train_all report_set);
    use Cache::Memcached::RustXS::Dict::Report::Dictionaries qw(print_report_set set_data);

    my $tmp = File::Temp->newdir;
    open my $dump, '>', "$tmp/values" or die $!;    # values as a get response
    for my $i (1 .. 300) {
        my $v = qq({"id":$i,"name":"user$i","plan":"free","tags":["a","b"],"visits":) . ($i * 7) . '}';
        print {$dump} "VALUE user:$i 0 " . length($v) . "\r\n$v\r\n";
    }
    print {$dump} "END\r\n";
    close $dump or die $!;

    my %how = (source => Cache::Memcached::RustXS::Dict::Files->read(["$tmp/values"]),
               delimiter => ':', sample => 1000, dir => "$tmp/set",
               memory => Cache::Memcached::RustXS::Dict::SlabModel->new,
               compress_time => 0, decompress_time => 0);    # no speed limits
    train_all(%how, stage => 0);
    my $report = report_set(%how);    # report --dictionaries on the set just made
    print_report_set(\*STDOUT, $report);
    my $data = set_data($report);     # what --json prints
    print "$_->{prefix}: $_->{verdict}\n" for @{ $data->{prefixes} };

=head1 DESCRIPTION

How L<cmrx-dict> prints the results of C<train --all> and C<report
--dictionaries> (C<train_all> and C<report_set> of
L<Cache::Memcached::RustXS::Dict::SetTrainer>): per prefix, the held-out
memory of the baselines, the tuner's choice and the alternatives it beat;
then the set and what was done to it, or each prefix's verdict and the
dictionary IDs the sampled values name. The tables and text are
L<Cache::Memcached::RustXS::Dict::Report>'s.

=head1 FUNCTIONS

Exported on request: C<print_train_all>, C<print_report_set>, C<set_data>.

=over 4

=item print_train_all($fh, $result), print_report_set($fh, $result)

The result of C<train_all> or C<report_set>
(L<Cache::Memcached::RustXS::Dict::SetTrainer/FUNCTIONS>) as text: per
prefix the held-out memory of the baselines, the tuner's choice and the
alternatives it beat (the first eight, and the choice); then the set and
what was done (C<train --all>: the staging, the fallback, the whole-cache
entry), or the verdicts and the IDs sampled values name
(C<report --dictionaries>).

=item set_data($result)

The same as data for JSON: per prefix its C<outcome>, C<action> or
C<verdict>, C<why>, the baselines and the candidates; C<whole_cache> with
its C<shares>; the C<fallback>; the set's entries.

=back

=head1 SEE ALSO

L<Cache::Memcached::RustXS::Dict::SetTrainer>, whose results these are;
L<cmrx-dict/EXAMPLES>, where this output is shown as printed.

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
