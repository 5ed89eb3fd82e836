package Cache::Memcached::RustXS::Dict;

use strict;
use warnings;

use Exporter 5.57 'import';
use Digest::MD5 ();
use Scalar::Util ();

use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Zstd ();

our $VERSION = '1.000';

# report and train measure every 2nd value of a prefix's sample (held out)
# and train on the others; the settings advice forecasts from the same half.
our $REPORT_HOLD_OUT = 2;

our @EXPORT_OK = qw(fail unusable sum_length round ratio held_out_split distinct_values
                    load_dictionary_file load_dictionary_bytes @BASELINES);

# What a prefix's values are measured as before any dictionary, in the order
# reports show them: stored raw, Compress::Zlib's memGzip (what the stock
# clients write), this distribution's gzip, and zstd at level 3.
our @BASELINES = qw(raw memGzip gzip zstd);

# The exceptions of cmrx-dict's modules; the command turns their kinds into
# exit statuses.
sub fail     { die Cache::Memcached::RustXS::Dict::Error->new(failure  => $_[0]) }
sub unusable { die Cache::Memcached::RustXS::Dict::Error->new(unusable => $_[0]) }

sub sum_length {
    my ($strings) = @_;
    my $sum = 0;
    $sum += length for @$strings;
    return $sum;
}

sub round {
    my ($x, $places) = @_;
    return 0 + sprintf "%.${places}f", $x;
}

sub ratio {
    my ($x, $y) = @_;
    return $y ? round($x / $y, 3) : undef;
}

# The one split of samples into those a dictionary is trained on and those
# it is judged on (the POD says how). Values are told apart by their MD5,
# so that the split holds no second copy of the sample.
sub held_out_split {
    my ($items, $every, $value_of) = @_;
    my (@train, @held, %held_value);
    my $distinct = 0;
    for my $item (@$items) {
        my $value = defined $value_of ? $value_of->($item) : $item;
        my $digest = ref $value ? Scalar::Util::refaddr($value) : Digest::MD5::md5($value);
        $held_value{$digest} = $distinct++ % $every == $every - 1 ? 1 : 0 unless exists $held_value{$digest};
        push @{ $held_value{$digest} ? \@held : \@train }, $item;
    }
    return (\@train, \@held);
}

# The [$key, $value] pairs whose value is the first of its copies, in order.
sub distinct_values {
    my ($pairs) = @_;
    my %seen;
    return [ grep { !$seen{ Digest::MD5::md5($_->[1]) }++ } @$pairs ];
}

# The ID of the dictionary in $file, loaded for the process; fails with
# load_dictionary's reason.
sub load_dictionary_file {
    my ($file) = @_;
    my $id = eval { Cache::Memcached::RustXS::Zstd::load_dictionary($file) };
    fail(Cache::Memcached::RustXS::_error_message($@)) unless defined $id;
    return $id;
}

# The ID of the dictionary $bytes hold, loaded for the process from the
# bytes themselves; fails with the engine's reason.
sub load_dictionary_bytes {
    my ($dict) = @_;
    my $id = eval { Cache::Memcached::RustXS::Zstd::_load_dictionary_bytes($dict) };
    fail('load_dictionary: ' . Cache::Memcached::RustXS::_error_message($@)) unless defined $id;
    return $id;
}

package Cache::Memcached::RustXS::Dict::Error;

use overload '""' => sub { $_[0]{message} }, fallback => 1;

sub new {
    my ($class, $kind, $message) = @_;
    return bless { kind => $kind, message => $message }, $class;
}

sub kind    { $_[0]{kind} }
sub message { $_[0]{message} }

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict - the modules of the cmrx-dict command, and their exceptions

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict qw(fail sum_length ratio);

    my $values = [ 'abc', 'de' ];
    print sum_length($values), "\n";           # 5
    print ratio(1, 3), "\n";                   # 0.333

    my $ok = eval { fail('the server closed the connection'); 1 };
    print "failed: $@\n" unless $ok;           # the message
    print $@->kind, "\n";                      # failure

=head1 DESCRIPTION

L<cmrx-dict> is a thin wrapper around these modules, each of one part of
its work, so that each can be used and tested alone:

=over 4

=item L<Cache::Memcached::RustXS::Dict::NodeReader>, L<Cache::Memcached::RustXS::Dict::Pool>, L<Cache::Memcached::RustXS::Dict::Files>

The sources of values: one connection to a memcached server, reading
only (the keys it lists, values, its settings and slab classes); the
nodes of a pool as one source; files of get responses, and plain samples.

=item L<Cache::Memcached::RustXS::Dict::Sample>

Which values to look at: keys grouped by prefix and sampled evenly, their
values fetched and decoded.

=item L<Cache::Memcached::RustXS::Dict::Measure>

What values take under each codec (gzip, zstd, zstd with a dictionary)
and how long each takes; the held-out split; training.

=item L<Cache::Memcached::RustXS::Dict::SlabModel>, L<Cache::Memcached::RustXS::Dict::Tune>

The memory memcached gives an item; the dictionary, size and level that
make a prefix's values take least of it.

=item L<Cache::Memcached::RustXS::Dict::SettingsAdvisor>

The items each memcached setting would hold for the values as the set
writes them, and the change worth making, safely (C<report>'s last part).

=item L<Cache::Memcached::RustXS::Dict::SetTrainer>, L<Cache::Memcached::RustXS::Dict::Prune>

The dictionary sets: C<train --all> and C<report --dictionaries> (one
decision per prefix), and C<prune>.

=item L<Cache::Memcached::RustXS::Dict::Report>, L<Cache::Memcached::RustXS::Dict::Report::Values>, L<Cache::Memcached::RustXS::Dict::Report::Dictionaries>, L<Cache::Memcached::RustXS::Dict::Report::Set>

Every subcommand's output, as text tables or JSON: the parts they share,
then C<report> and C<train>; C<train --all> and C<report
--dictionaries>; C<prune>, C<list>, C<rollback> and C<history>.

=item L<Cache::Memcached::RustXS::Dict::Workers>, L<Cache::Memcached::RustXS::Dict::Progress>

Prefixes tuned in processes of their own, C<--jobs> at once; the progress
line.

=item L<Cache::Memcached::RustXS::Dict::CLI>

The command line: options, subcommands, exit statuses.

=back

They are the command's modules, documented so that they can be built on,
not a stable API: what they return follows what the command prints.

This module holds what they share.

=head1 FUNCTIONS

Nothing is exported by default.

=over 4

=item fail($message)

Dies with a C<Cache::Memcached::RustXS::Dict::Error> of kind C<failure>:
the work cannot go on (a server that does not answer, a file that cannot
be read). C<cmrx-dict> exits 1.

=item unusable($message)

Dies with an error of kind C<unusable>: a server the command cannot work
with (one that cannot list its keys). C<cmrx-dict> exits 2.

=item sum_length(\@strings)

The sum of their lengths, in bytes for strings of bytes.

=item round($x, $places)

C<$x> rounded to C<$places> decimals, as a number.

=item held_out_split(\@items, $every, $value_of)

C<(\@train, \@held)>: every C<$every>-th distinct value held out (the
C<$every>-th, the 2 x C<$every>-th, ..., in the order each first
appears), the others to train on, both in order. Every copy of a value
goes to the side its first copy went to: a cache holds one value under
many keys, and a dictionary judged on copies of values it was trained on
would look better than it is. Without copies, every C<$every>-th item is
held out. C<$value_of> (optional) gives an item's value, told apart from
the others by its MD5 (C<sub { $_[0][1] }> for C<[$key, $value]> pairs;
by default the item itself, a reference being distinct from every
other). C<cmrx-dict report> and C<train> measure on every
C<$Cache::Memcached::RustXS::Dict::REPORT_HOLD_OUT>-th (2nd) sampled value; the tuner judges its candidates on
every 4th of the values it is given; the tests and the benchmark split the
corpus as C<report> does.

=item distinct_values(\@pairs)

The C<[$key, $value]> pairs whose value is the first of its copies, in
order: what a dictionary is trained on (a second copy adds nothing to it).

=item load_dictionary_file($file), load_dictionary_bytes($bytes)

Loads a dictionary for the process
(L<Cache::Memcached::RustXS::Zstd/load_dictionary($path)>) and returns its
ID; fails with the reason it does not load. Both the measuring and the
tuner load through them.

=item @BASELINES

The names of what the tuning measures a prefix's values as before any
dictionary, in the order the reports show them: C<raw>, C<memGzip>
(Compress::Zlib's, what the stock clients write), C<gzip> (this
distribution's) and C<zstd> (level 3, no dictionary).

=item ratio($x, $y)

C<$x / $y> rounded to three decimals, or C<undef> when C<$y> is 0.

=back

=head2 Cache::Memcached::RustXS::Dict::Error

The exception object: C<< ->kind >> (C<failure>, C<unusable>, or
C<usage> for the command line's own), C<< ->message >>, and
C<< Cache::Memcached::RustXS::Dict::Error->new($kind, $message) >>. It
stringifies to its message.

=head1 SEE ALSO

L<cmrx-dict>, the command these modules make, and
L<Cache::Memcached::RustXS::Zstd>, whose dictionaries they train.

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
