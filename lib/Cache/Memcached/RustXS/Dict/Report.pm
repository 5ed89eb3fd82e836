package Cache::Memcached::RustXS::Dict::Report;

# What every cmrx-dict command's output shares: the text tables, how
# prefixes, durations and counts read, JSON, and a pool's spread over its
# nodes. Each command's own output is in a module under Report/.

use strict;
use warnings;

use Exporter 5.57 'import';

use Cache::Memcached::RustXS ();

our $VERSION = '1.000';

our @EXPORT_OK = qw(table aligned_table shown text percent fixed us_pair plural prefix_text duration_text ids_note
                    skipped_reasons skipped_note by_node print_nodes json_true json_false print_json);

# ---- a pool's nodes ----------------------------------------------------------------

# A pool's spread of a group: its keys, sampled keys and values on each
# node.
sub by_node {
    my ($g) = @_;
    return () unless $g && $g->{keys_by_node};
    return (keys_by_node => [ @{ $g->{keys_by_node} } ], sampled_by_node => [ @{ $g->{sampled_by_node} } ],
            values_by_node => [ @{ $g->{values_by_node} || [] } ]);
}

# From a pool: how many keys each node listed of each prefix, and how many
# values of its sample each gave (keys / values), so that a node that
# gave none, or few, shows.
sub print_nodes {
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

# The one line that says the listing found more prefixes than a site has
# (keys that start with an ID), with examples, and what was done.
sub ids_note {
    my ($listing) = @_;
    my $rest = $listing->{rest};
    my $kept = keys %{ $listing->{groups} };
    return sprintf "%d prefixes listed, more than --max-prefixes %d: keys that start with an ID (%s, ...); "
                 . "%s holding at least 1/%d of the item bytes %s measured, the other %d (%d keys) summed in one row",
        $rest->{seen_prefixes}, $listing->{max_prefixes}, join(', ', map { shown($_) } @{ $rest->{examples} }),
        plural($kept, 'prefix', 'prefixes'), 10 * $listing->{max_prefixes}, ($kept == 1 ? 'is' : 'are'),
        $rest->{prefixes}, $rest->{keys};
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

Cache::Memcached::RustXS::Dict::Report - what every cmrx-dict command's output shares: text tables, JSON, prefixes, durations, a pool's nodes

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::Report qw(table plural duration_text prefix_text print_json);

    open my $fh, '>', \my $text or die $!;
    table($fh, [ 'prefix', 'values', 'retired for' ],
          [ prefix_text('user:'), plural(3, 'value'), duration_text(36 * 3600) ],
          [ prefix_text(''),      plural(1, 'value'), duration_text(42) ]);
    print $text;
    #   prefix                  values  retired for
    #   user:                 3 values       1d 12h
    #   '' (the whole cache)   1 value          42s
    print_json(\*STDOUT, { prefix => 'user:', values => 3 }) if eval { require JSON::PP; 1 };

=head1 DESCRIPTION

L<cmrx-dict> prints every command's result as text tables or, with
C<--json>, as data. The output of each command lives in a module of its
own, and this one holds what they share:

=over 4

=item L<Cache::Memcached::RustXS::Dict::Report::Values>

C<report> and C<train>.

=item L<Cache::Memcached::RustXS::Dict::Report::Dictionaries>

C<train --all> and C<report --dictionaries>.

=item L<Cache::Memcached::RustXS::Dict::Report::Set>

C<prune>, C<list>, C<rollback> and C<history>.

=back

Strings in the data are as JSON wants them: prefixes and file names whose
bytes are UTF-8 as characters, any other byte as the character of that
code; the text output prints their bytes, control bytes escaped (C<\x0A>).

=head1 FUNCTIONS

Exported on request: C<table>, C<aligned_table>, C<shown>, C<text>,
C<percent>, C<fixed>, C<us_pair>, C<plural>, C<prefix_text>,
C<duration_text>, C<skipped_reasons>, C<skipped_note>, C<by_node>,
C<print_nodes>, C<json_true>, C<json_false>, C<print_json>.

=over 4

=item table($fh, \@head, @rows), aligned_table($fh, $alignment, @rows)

Prints rows of cells under a head, indented by two spaces, the first
column left-aligned and the others right-aligned, each as wide as its
widest cell; or rows aligned as C<$alignment> says, a letter a column,
C<l> (left) or C<r> (right): C<'rllr'>.

=item shown($string), text($bytes)

A string as printed (its bytes, control bytes escaped), and a string of
bytes as JSON's data (UTF-8 decoded where it is UTF-8).

=item percent($x, $of), fixed($ratio), us_pair($measure), plural($n, $word, $words)

C<"33%"> (C<-> of nothing), C<"0.412"> (C<-> for C<undef>),
C<"12.5 / 3.1"> (microseconds to compress / decompress), C<"1 value"> /
C<"2 values"> (C<$words> the plural when it is not C<$word> and C<s>:
C<plural(2, 'prefix', 'prefixes')>).

=item prefix_text($prefix)

A set's prefix as printed: its bytes (L</shown($string), text($bytes)>),
or C<'' (the whole cache)> for the empty one.

=item ids_note($listing)

The one line said when a listing
(L<Cache::Memcached::RustXS::Dict::Sample/"$sample-E<gt>listing">) found more
prefixes than C<--max-prefixes>: how many, examples of their keys, how
many are measured and how many summed in the rest.

=item duration_text($seconds)

Seconds as people read them, in the two largest units: C<9d 2h>, C<1d 12h>,
C<5m 3s>, C<42s>.

=item skipped_reasons($group)

What of a group of sampled keys (or a training's source) was skipped and
why, one phrase each: C<"2 keys gone before they were fetched">, ...

=item skipped_note($group)

C<" (2 keys gone; 1 value gzip that does not decompress)"> for a group
that lost values between listing and decoding, else C<''>.

=item by_node($group), print_nodes($fh, $spec, [ $name, $group ], ...)

A group sampled from a pool, node by node: C<by_node> gives the data
(C<keys_by_node>, C<sampled_by_node>, C<values_by_node>; nothing for a
single server), C<print_nodes> the table of keys listed and values sampled
on each node of C<$spec> (C<"host1:11211, host2:11211">), a row a group,
so that a node that gave few values shows.

=item print_json($fh, $data), json_true, json_false

Prints the data as canonical, pretty JSON (needs JSON::PP, part of perl
from 5.14); JSON::PP's booleans when it is loaded, else 1 and 0.

=back

=head1 SEE ALSO

L<cmrx-dict>, whose output this is; L<JSON::PP>, which prints C<--json>.

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
