package Cache::Memcached::RustXS::Dict::SettingsAdvisor;

use strict;
use warnings;

use Exporter 5.57 'import';

use Cache::Memcached::RustXS::Dict qw(held_out_split);
use Cache::Memcached::RustXS::Dict::SlabModel ();
use Cache::Memcached::RustXS::Zstd ();

our $VERSION = '1.000';
our @EXPORT_OK = qw(node_facts stored_item written_items forecast report_items set_written_items set_items cas_use advise
                    pack_items unpack_items print_advice advice_data);

my @FACTORS       = (1.25, 1.2, 1.15, 1.1, 1.08, 1.05);    # -f values forecast
my @CHUNK_MAXES   = (16384, 32768, 65536);    # slab_chunk_max values forecast beside the node's own
my $TOP_GAP       = 1.25 ** 2;  # a candidate's top step: no more than memcached's defaults can make
my $WORTH         = 0.01;       # a change is named when it holds at least 1 % more items
my @CAS_COUNTERS  = qw(cas_misses cas_hits cas_badval);
my %DEFAULTS      = (growth_factor => 1.25, chunk_size => 48, slab_chunk_max => 524288, cas => 1);

# What the advisor reads of a node: `stats settings`, `stats` and
# `version`, three short commands.
# A server that does not answer `stats` (or `version`) gets advice
# without them: no -C, as CAS use cannot be ruled out.
sub node_facts {
    my ($server) = @_;
    my %facts = (spec => $server->spec, settings => $server->settings);
    $facts{stats}   = eval { $server->stats };
    $facts{version} = eval { $server->version };
    return \%facts;
}

# [key length, stored length, flags] of a value as a writer stores it:
# compressed (flags 2) when it is at least $threshold bytes and its frame
# at most $ratio of it, else raw.
sub stored_item {
    my ($key_length, $value_length, $frame_length, $threshold, $ratio) = @_;
    return [ $key_length, $frame_length, 2 ]
        if defined $frame_length && $value_length >= $threshold && $frame_length <= $ratio * $value_length;
    return [ $key_length, $value_length, 0 ];
}

# [key length, stored length, flags, times] of each value as a writer
# stores it (stored_item: threshold, ratio 0.8 unless given), its frame of
# $frame_sizes (undef: none), each written $opt{times} times (1).
sub written_items {
    my ($keys, $values, $frame_sizes, %opt) = @_;
    my ($threshold, $ratio, $times) = map { defined $opt{$_->[0]} ? $opt{$_->[0]} : $_->[1] }
                                      [ threshold => 0 ], [ ratio => 0.8 ], [ times => 1 ];
    return [ map { [ @{ stored_item(length(defined $keys->[$_] ? $keys->[$_] : ''), length $values->[$_],
                                    $frame_sizes->[$_], $threshold, $ratio) }, $times ] } 0 .. $#$values ];
}

# The items a memcached of the model's settings holds once written past
# its memory with these items (Memory's forecast_items): what the advisor
# ranks settings by and the tuner ranks candidates by.
sub forecast {
    my ($model, $items) = @_;
    return scalar $model->forecast_items($items);
}

# The held-out values of a group as the set would write them: with the
# prefix's tuned dictionary when it has one worth it (its frames'
# sizes), else as zstd -3 writes them; each standing for its share of the
# prefix's keys.
sub report_items {
    my ($g, $values, $frame_sizes) = @_;
    my $h = $g->{held_out};
    # The values report measured on: Measure's held-out half.
    my (undef, $held_at) = held_out_split([ 0 .. $#$values ], $Cache::Memcached::RustXS::Dict::REPORT_HOLD_OUT,
                                          sub { $values->[ $_[0] ] });
    my @held = @$values[@$held_at];
    return () unless @held;
    my @keys = @{ $g->{value_keys} }[@$held_at];
    my $with_dictionary = @$frame_sizes == @held && !$h->{zstd_dict_refused};
    my $sizes = $with_dictionary ? $frame_sizes : Cache::Memcached::RustXS::Zstd::frame_sizes(\@held, level => 3);
    my $threshold = Cache::Memcached::RustXS::Zstd::_fast_threshold($with_dictionary);    # fast_options'
    return @{ written_items(\@keys, \@held, $sizes, threshold => $threshold,
                            times => ($g->{keys} || @held) / @held) };
}

# A prefix's sampled values of report --dictionaries as the set in $dir
# writes them (a writer for the prefix, fast_options' threshold and
# ratio), each standing for its share of the prefix's keys: measured where
# the values are (the prefix's own process), kept as items.
sub set_written_items {
    my ($dir, $decision, $pairs) = @_;
    return '' unless @$pairs;
    my $methods = Cache::Memcached::RustXS::Zstd::compress_methods(
        dictionaries => $dir, prefix => defined $decision->{set_prefix} ? $decision->{set_prefix} : '');
    my @values = map { $_->[1] } @$pairs;
    my @sizes = map { my $frame; $methods->[0]->(\$_, \$frame) ? length $frame : undef } @values;
    return pack_items(written_items([ map { $_->[0] } @$pairs ], \@values, \@sizes,
                                    threshold => Cache::Memcached::RustXS::Zstd::_fast_threshold(1),
                                    times => ($decision->{group}{keys} || @$pairs) / @$pairs));
}

# The items of every prefix of a report --dictionaries result.
sub set_items {
    my ($result) = @_;
    return map { unpack_items($_->{written_items}) } grep { defined $_->{written_items} } @{ $result->{prefixes} };
}

# Items as a prefix's process returns them: 20 bytes an item, where a
# Perl array takes some 200. Flags are memcached's 32 bits.
my $ITEM_PACKING = 'N N N d';
my $PACKED_ITEM  = length pack $ITEM_PACKING, 0, 0, 0, 0;

sub pack_items {
    my ($items) = @_;
    return join '', map { pack $ITEM_PACKING, @{$_}[0 .. 2], defined $_->[3] ? $_->[3] : 1 } @$items;
}

sub unpack_items {
    my ($packed) = @_;
    return map { [ unpack $ITEM_PACKING, substr $packed, $_ * $PACKED_ITEM, $PACKED_ITEM ] }
           0 .. length($packed) / $PACKED_ITEM - 1;
}

# The counters that say a client used cas on the node since it started
# (gets is counted with get in cmd_get, so it cannot be told apart).
sub cas_use {
    my ($stats) = @_;
    my @used = grep { ($stats->{$_} || 0) > 0 } @CAS_COUNTERS;
    return @used ? join(', ', map { "$_ $stats->{$_}" } @used) : undef;
}

sub _options_text {
    my ($s, $named) = @_;
    my @o;
    push @o, "-f $s->{growth_factor}" if $s->{growth_factor} != $DEFAULTS{growth_factor};
    push @o, "-n $s->{chunk_size}" if $s->{chunk_size} != $DEFAULTS{chunk_size};
    push @o, "-o slab_chunk_max=$s->{slab_chunk_max}"
        if $named->{slab_chunk_max} && $s->{slab_chunk_max} != $DEFAULTS{slab_chunk_max};
    push @o, '-C' unless $s->{cas};
    return @o ? join(' ', @o) : "memcached's defaults";
}

# The settings forecast for one node: memcached's defaults, the node's own,
# and the candidates its version has options for (a candidate without CAS
# only where it is safe).
sub _candidates {
    my ($model, $named, $no_cas_ok, $items) = @_;
    my $own = $model->settings;
    my @n = ($own->{chunk_size});
    push @n, $DEFAULTS{chunk_size} if $own->{chunk_size} != $DEFAULTS{chunk_size};
    # A first class just holding the smallest item sampled.
    my ($smallest) = sort { $a <=> $b } map { $model->item_size(@$_[0 .. 2]) } @$items;
    my $fitted = defined $smallest ? $smallest - $model->item_header : undef;
    push @n, $fitted if defined $fitted && $fitted > 8 && $fitted < 1024 && !grep { $_ == $fitted } @n;
    my @chunk_max = ($own->{slab_chunk_max});
    push @chunk_max, grep { $_ != $own->{slab_chunk_max} && $_ <= $own->{item_size_max} } @CHUNK_MAXES
        if $named->{slab_chunk_max};
    my @cas = ($own->{cas});
    push @cas, 0 if $own->{cas} && $no_cas_ok;
    push @cas, 1 if !$own->{cas};
    my @c;
    for my $f (@FACTORS) {
        for my $n (@n) {
            for my $max (@chunk_max) {
                push @c, { growth_factor => $f, chunk_size => $n, slab_chunk_max => $max, cas => $_ } for @cas;
            }
        }
    }
    return @c;
}

# The items of a model with these settings; undef for settings memcached
# refuses, and for a candidate whose classes run out below slab_chunk_max
# (items a little over its largest class would take a whole
# slab_chunk_max chunk: a sample without them does not show the cost).
sub _forecast {
    my ($model, $items, $candidate, %s) = @_;
    my $m = eval { $model->with_settings(%s) } or return undef;
    return undef if $candidate && $m->top_gap > $TOP_GAP;
    return forecast($m, $items);
}

# The forecast and the advice for each node of a pool, and the pool's sum:
# items => [[key length, stored length, flags, times], ...] (the sample as
# written, each value standing for $times of the node's items), nodes =>
# [node_facts, ...], uses_cas => 1 when a client is known to use gets/cas.
sub advise {
    my (%opt) = @_;
    my $items = $opt{items};
    my (@nodes, %pool);
    for my $node (@{ $opt{nodes} }) {
        my $model = Cache::Memcached::RustXS::Dict::SlabModel->from_stats($node->{settings}, []);
        my %named = map { ($_ => exists $node->{settings}{$_} ? 1 : 0) }
                    qw(growth_factor chunk_size slab_chunk_max cas_enabled);
        my $cas_seen = $node->{stats} ? cas_use($node->{stats}) : undef;
        my $counted = $node->{stats} && !grep { !defined $node->{stats}{$_} } @CAS_COUNTERS;
        my $no_cas_ok = !$opt{uses_cas} && !$cas_seen && $counted && $named{cas_enabled};
        my $own = $model->settings;
        my %current = map { ($_ => $own->{$_}) } keys %DEFAULTS;
        my @rows = ({ name => 'current', settings => \%current },
                    { name => "memcached's defaults", settings => { %DEFAULTS } });
        push @rows, map { +{ name => 'candidate', settings => $_ } } _candidates($model, \%named, $no_cas_ok, $items);
        my (@out, %done);
        for my $r (@rows) {
            my $key = join ' ', map { "$_=$r->{settings}{$_}" } sort keys %{ $r->{settings} };
            next if $done{$key}++ && $r->{name} eq 'candidate';
            my $n = _forecast($model, $items, $r->{name} eq 'candidate', %{ $r->{settings} });
            next unless defined $n;
            push @out, { %$r, options => _options_text($r->{settings}, \%named), items => $n };
        }
        # Of candidates that hold the same, the one with the fewest changes.
        my %fewest;
        for my $r (sort { _changes($a, \%current) <=> _changes($b, \%current) } @out) {
            $fewest{ $r->{items} } ||= $r;
        }
        @out = grep { $_->{name} ne 'candidate' || $fewest{ $_->{items} } == $_ } @out;
        my ($now) = grep { $_->{name} eq 'current' } @out;
        my @safe = grep { $_->{settings}{cas} || !$current{cas} || $no_cas_ok } @out;
        my ($best) = sort { $b->{items} <=> $a->{items} || _changes($a, \%current) <=> _changes($b, \%current) } @safe;
        # The fewest changes that hold within a tenth of a percent of the best.
        my ($pick) = sort { _changes($a, \%current) <=> _changes($b, \%current) || $b->{items} <=> $a->{items} }
                     grep { $_->{items} >= $best->{items} * 0.999 } @safe;
        my $gain = $now->{items} ? $pick->{items} / $now->{items} - 1 : 0;
        my %n = (spec => $node->{spec}, version => $node->{version}, memory_limit => $model->memory_limit,
                 cas_in_use => $cas_seen, uses_cas => $opt{uses_cas} ? 1 : 0,
                 forecasts => [ sort { $b->{items} <=> $a->{items} } @out ],
                 current => $now->{items}, defaults => (grep { $_->{name} eq "memcached's defaults" } @out)[0]{items},
                 best => { options => $pick->{options}, items => $pick->{items}, settings => $pick->{settings} },
                 gain => $gain, change => $gain >= $WORTH ? 1 : 0);
        $n{no_cas_why} = $opt{uses_cas} ? 'a client uses gets/cas (--uses-cas)'
                       : $cas_seen ? "its stats show cas in use ($cas_seen)"
                       : !$counted ? 'its stats do not count cas_misses, cas_hits and cas_badval'
                       : !$named{cas_enabled} ? 'its version does not say cas_enabled' : undef;
        push @nodes, \%n;
        $pool{$_} += $n{$_} for qw(current defaults);
        $pool{best} += $n{change} ? $n{best}{items} : $n{current};
    }
    $pool{gain} = $pool{current} ? $pool{best} / $pool{current} - 1 : 0;
    return { nodes => \@nodes, pool => \%pool, sampled_items => scalar @$items };
}

sub _changes {
    my ($row, $current) = @_;
    return scalar grep { $row->{settings}{$_} != $current->{$_} } keys %$current;
}

my $PROCEDURE = <<'END';
A changed -f, -n, slab_chunk_max or -C takes effect only when memcached
starts: restarting a node loses its items. In a pool, one node at a time:
restart it with the new options (keeping its -m, -I and the rest), let the
clients refill it until its hit rate (get_hits / cmd_get) is back where it
was, then the next node. The other nodes keep serving meanwhile; only the
restarted node's share of keys misses.
Then train on a restarted, refilled node (cmrx-dict train --all --server
HOST:PORT --out-dir DIR): the set is tuned for the slab classes of the
options it runs with now, and holds at least what this forecast says.
The steps: perldoc Cache::Memcached::RustXS::Operations, "Changing them:
one node at a time".
END

sub print_advice {
    my ($fh, $advice) = @_;
    return unless $advice && @{ $advice->{nodes} };
    print {$fh} "\nmemcached settings: items the memory holds, forecast for the sampled values as written\n";
    for my $n (@{ $advice->{nodes} }) {
        printf {$fh} "\n%s (memcached %s, -m %d MB)\n", $n->{spec}, $n->{version} || '?', $n->{memory_limit} / 1048576;
        my @rows = grep { $_->{name} ne 'candidate' } @{ $n->{forecasts} };
        if (@rows == 2 && $rows[0]{options} eq $rows[1]{options}) {
            @rows = ({ %{ $rows[0] }, name => "current, memcached's defaults" });
        }
        my %shown = map { ($_->{options} => 1) } @rows;
        my @top = grep { !$shown{ $_->{options} }++ } grep { $_->{name} eq 'candidate' } @{ $n->{forecasts} };
        splice @top, 5 if @top > 5;
        for my $r (sort { $b->{items} <=> $a->{items} } @rows, @top) {
            printf {$fh} "  %-46s %12d items  %+6.1f %%%s\n", $r->{options}, $r->{items},
                $n->{current} ? 100 * ($r->{items} / $n->{current} - 1) : 0,
                $r->{name} eq 'candidate' ? '' : "  ($r->{name})";
        }
        print {$fh} "  no -C: $n->{no_cas_why}\n" if $n->{no_cas_why};
        if ($n->{change}) {
            printf {$fh} "  advice: start it with %s: %d items instead of %d (%+.1f %%)\n",
                $n->{best}{options}, $n->{best}{items}, $n->{current}, 100 * $n->{gain};
        } else {
            print {$fh} "  advice: keep its settings (no candidate holds 1 % more)\n";
        }
    }
    my $p = $advice->{pool};
    printf {$fh} "\nPool: %d items now, %d with the advice (%+.1f %%), %d with memcached's defaults\n",
        $p->{current}, $p->{best}, 100 * $p->{gain}, $p->{defaults} if @{ $advice->{nodes} } > 1;
    print {$fh} "\n$PROCEDURE" if grep { $_->{change} } @{ $advice->{nodes} };
    return;
}

# The advice as JSON data (print_json's).
sub advice_data {
    my ($advice) = @_;
    return undef unless $advice;
    return { %$advice, procedure => $PROCEDURE };
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::SettingsAdvisor - the items each memcached setting would hold for the values the set writes, and which to change, safely

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::SettingsAdvisor qw(advise print_advice stored_item);

    # The facts of a node, as node_facts($dict_server) reads them
    my %node = (spec => 'cache1:11211', version => '1.6.18',
                settings => { growth_factor => '1.25', chunk_size => 48, slab_chunk_max => 524288,
                              item_size_max => 1048576, maxbytes => 64 << 20, cas_enabled => 'yes',
                              slab_reassign => 'yes' },
                stats => { cas_misses => 0, cas_hits => 0, cas_badval => 0 });
    # The sample as written: 20-byte keys, 500-byte values compressed to
    # 150 to 239 bytes (threshold 64, ratio 0.8), each standing for 10 items
    my @items = map { [ @{ stored_item(20, 500, 150 + $_ % 90, 64, 0.8) }, 10 ] } 1 .. 200;
    my $advice = advise(items => \@items, nodes => [ \%node ]);
    print_advice(\*STDOUT, $advice);

=head1 DESCRIPTION

What a memcached node holds depends on its settings as much as on the
values: every item takes the smallest slab chunk that holds it, the chunks
grow by C<-f>, and each item carries 8 bytes of CAS unless the node runs
with C<-C>. For the values C<cmrx-dict report> samples, written as the
set writes them, this module forecasts with
L<Cache::Memcached::RustXS::Dict::SlabModel/"forecast_items(\@items)"> the items each
node's memory would hold with memcached's defaults, with the node's own
settings and with candidates (growth factors 1.05 to 1.25, the node's C<-n>
and one whose first class just holds the smallest item, C<slab_chunk_max>
16384 beside the node's own, CAS on and off), and names the one that holds
the most with the fewest changes.

It is safe by construction: it only reads (C<stats settings>, C<stats>,
C<version>); it never names C<-C> where the node's C<cas_misses>,
C<cas_hits> or C<cas_badval> are above 0 or the caller says a client uses
C<gets>/C<cas> (why the counters alone cannot tell:
L<Cache::Memcached::RustXS::Operations/"CAS (-C turns it off)">); it
names only options the node's C<stats settings> lists; and it
says that a changed setting needs a restart, one node at a time.

=head1 FUNCTIONS

=over 4

=item node_facts($server)

C<{ spec, settings, stats, version }> of a
L<Cache::Memcached::RustXS::Dict::NodeReader>; C<stats> and C<version> are
C<undef> when the server does not answer them (then C<-C> is not named).

=item stored_item($key_length, $value_length, $frame_length, $threshold, $ratio)

C<[$key_length, $length, $flags]> as a writer stores a value: its frame
(flags 2) when the value is at least C<$threshold> bytes and the frame at
most C<$ratio> of it, else the value (flags 0).

=item written_items(\@keys, \@values, \@frame_sizes, threshold => 0, ratio => 0.8, times => 1)

C<[[$key_length, $stored_length, $flags, $times], ...]>: each value as a
writer stores it (C<stored_item>), with its frame of C<@frame_sizes> (undef:
none).

=item forecast($model, \@items)

The items a memcached of the model's settings holds once written past its
memory with these items (L<Cache::Memcached::RustXS::Dict::SlabModel/forecast_items(\@items)>):
what the advice ranks settings by, and L<Cache::Memcached::RustXS::Dict::Tune>
ranks its candidates by.

=item report_items($group, \@values, \@frame_sizes)

The held-out values of a group that C<report> measured (those at odd
positions of C<@values>) as items written by the set it would make: the
frames of the prefix's tuned dictionary (C<@frame_sizes>, filled by
L<Cache::Memcached::RustXS::Dict::Measure/"measure_held_out(\@values, size =E<gt> 16384)">) where it has
one worth it, else zstd -3's; each standing for the prefix's keys over its
held-out values.

=item set_written_items($dir, $decision, \@pairs)

A prefix's values that C<report --dictionaries> sampled (C<[$key,
$value]>), as the set in C<$dir> writes them: its C<compress_methods> for
the decision's C<set_prefix>, with the threshold of
L<Cache::Memcached::RustXS::Zstd/fast_options(%options)> and ratio 0.8;
each standing for the prefix's keys over its values. Run in the prefix's
own process (C<decide_set>'s C<written_items>), so that no prefix's values
wait for the others. The items come back packed (C<pack_items>).

=item set_items($report_set_result)

The items of every prefix of the result, as C<set_written_items> gave them,
unpacked.

=item pack_items(\@items), unpack_items($packed)

Items as one string of 20 bytes an item, and back, exactly; packed
strings join by concatenation.

=item cas_use(\%stats)

The cas counters above 0, as text, or C<undef>.

=item advise(items => \@items, nodes => \@node_facts, uses_cas => 0)

Per node: C<forecasts> (each C<options>, C<items>, C<settings>, C<name>:
C<current>, C<memcached's defaults> or C<candidate>), C<current>,
C<defaults>, C<best> (the settings named), C<gain> (over the current
settings), C<change> (1 when the gain is at least 1 %), C<no_cas_why>; and
C<pool>: the sums of C<current>, C<defaults> and C<best>, and C<gain>.
Each item is C<[$key_length, $stored_length, $flags, $times]>.

=item print_advice($fh, $advice)

The advice as text, with the procedure when a change is named.

=item advice_data($advice)

The advice with the procedure, for JSON.

=back

=head1 SEE ALSO

L<cmrx-dict> (its report ends with this advice);
L<Cache::Memcached::RustXS::Dict::SlabModel>, the forecast it ranks
settings by; L<Cache::Memcached::RustXS::Operations>, how to change a
node's settings one node at a time.

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
