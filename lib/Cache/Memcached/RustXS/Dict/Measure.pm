package Cache::Memcached::RustXS::Dict::Measure;

use strict;
use warnings;

use Exporter 5.57 'import';
use Time::HiRes ();

use Compress::Zlib ();
use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Dict qw(fail sum_length round held_out_split load_dictionary_bytes);
use Cache::Memcached::RustXS::Dict::Tune ();

our $VERSION = '1.000';

our @EXPORT_OK = qw(measure_held_out codecs measure measure_codec compress_all
                    train best_time);

our $ZSTD_LEVEL = 3;
my $SAMPLE_KEY = 'sample:0000000001';    # the key of a sample read without one (its length counts in memcached)
my $ROUNDS     = 3;        # timing rounds; the fastest counts
my $ROUND_TIME = 0.005;    # seconds a timing round lasts at least
my $CALLS_IF_INSTANT = 1000;    # calls a round when one took no measurable time

# memGzip, zstd and zstd with a dictionary trained on the training half, each
# measured on the held-out half.
sub measure_held_out {
    my ($values, %opt) = @_;
    # Positions, so that the keys go with their values (copies of a value
    # stay on one side).
    my ($train_at, $held_at) = held_out_split([ 0 .. $#$values ], $Cache::Memcached::RustXS::Dict::REPORT_HOLD_OUT, sub { $values->[ $_[0] ] });
    my ($train, $held) = map { [ @$values[@$_] ] } $train_at, $held_at;
    my %measured = (values => scalar @$held, raw_bytes => sum_length($held),
             trained_on => scalar @$train, training_bytes => sum_length($train));
    return \%measured unless @$held;
    my $plain = codecs();
    %measured = (%measured, %{ measure($held, { memGzip => $plain->{memGzip}, zstd => $plain->{zstd} }) });
    return _tuned_held_out(\%measured, $train, $held, %opt, train_at => $train_at) if $opt{tune};
    my ($dict, $why) = train($train, $opt{size});
    if (!defined $dict) {
        $measured{zstd_dict_error} = "no dictionary from $measured{trained_on} value" . ($measured{trained_on} == 1 ? '' : 's')
                            . " ($measured{training_bytes} bytes): $why (a few hundred values help)";
        return \%measured;
    }
    my $id = load_dictionary_bytes($dict);
    $measured{zstd_dict} = measure_codec($held, codecs(dictionary => $id)->{zstd_dict});
    $measured{zstd_dict}{dictionary_bytes} = length $dict;
    return \%measured;
}

my $HELD_OUT_ID = 0x7e00_0000;
my $held_out_dictionaries = 0;

# The dictionary that Dict::Tune chooses on the training half (its own
# split inside it), measured at its level on the held-out half.
sub _tuned_held_out {
    my ($measured, $train, $held, %opt) = @_;
    my $keys = $opt{keys} || [];
    my @keys = map { defined $keys->[$_] ? $keys->[$_] : $SAMPLE_KEY } @{ $opt{train_at} };
    my $tuned = Cache::Memcached::RustXS::Dict::Tune::tune(
        %{ $opt{tune} }, samples => [ map { [ $keys[$_], $train->[$_] ] } 0 .. $#$train ]);
    my $c = $tuned->{choice};
    if (!$c) {
        $measured->{zstd_dict_error} = "no dictionary from $measured->{trained_on} value" . ($measured->{trained_on} == 1 ? '' : 's')
                              . " ($measured->{training_bytes} bytes): $tuned->{no_dictionary}";
        return $measured;
    }
    # Loaded under an ID of its own (4 bytes in each frame, as a dictionary
    # that train writes names a random 32-bit one).
    my $id = load_dictionary_bytes(Cache::Memcached::RustXS::Zstd::dictionary_with_id(
        $tuned->{dictionary}, $HELD_OUT_ID + ++$held_out_dictionaries));
    my $level = $c->{level};
    # The frames' sizes, for those who forecast memory with them.
    @{ $opt{frame_sizes} } = @{ Cache::Memcached::RustXS::Zstd::frame_sizes(
        $held, level => $level, dictionary => $tuned->{dictionary}) } if $opt{frame_sizes};
    $measured->{zstd_dict} = measure_codec($held, {
        compress   => sub { Cache::Memcached::RustXS::Zstd::compress($_[0], level => $level, dictionary => $id) },
        decompress => \&Cache::Memcached::RustXS::Zstd::decompress });
    $measured->{zstd_dict}{dictionary_bytes} = length $tuned->{dictionary};
    $measured->{zstd_dict}{$_} = $c->{$_} for qw(method size level);
    $measured->{zstd_dict}{$_} = $c->{$_} for grep { defined $c->{$_} } qw(k d);
    $measured->{zstd_dict}{keys_counted} = $tuned->{keys} if defined $tuned->{keys};
    my ($worth, $why) = Cache::Memcached::RustXS::Dict::Tune::worth_a_dictionary($tuned);
    $measured->{zstd_dict_refused} = $why unless $worth;
    return $measured;
}

# The codecs measured: { name => { compress => sub, decompress => sub } }.
sub codecs {
    my (%opt) = @_;
    my %codecs = (
        # What both clients write today, and read (Compress::Zlib's; "gzip"
        # is this distribution's); memGunzip empties its argument, so it
        # gets a copy.
        memGzip => { compress   => sub { Compress::Zlib::memGzip($_[0]) },
                  decompress => sub { my $copy = $_[0]; Compress::Zlib::memGunzip($copy) } },
        zstd => { compress   => sub { Cache::Memcached::RustXS::Zstd::compress($_[0], level => $ZSTD_LEVEL) },
                  decompress => \&Cache::Memcached::RustXS::Zstd::decompress },
    );
    if (defined $opt{dictionary}) {
        my $id = $opt{dictionary};
        $codecs{zstd_dict} = {
            compress   => sub { Cache::Memcached::RustXS::Zstd::compress($_[0], level => $ZSTD_LEVEL, dictionary => $id) },
            decompress => \&Cache::Memcached::RustXS::Zstd::decompress,
        };
    }
    return \%codecs;
}

sub measure {
    my ($inputs, $codecs) = @_;
    return { map { ($_ => measure_codec($inputs, $codecs->{$_})) } sort keys %$codecs };
}

# Stored bytes of the values compressed one by one, and microseconds per
# value each way.
sub measure_codec {
    my ($inputs, $codec) = @_;
    my $frames = compress_all($inputs, $codec);
    my ($compress, $decompress) = @{$codec}{qw(compress decompress)};
    my $us_c = best_time(sub { $compress->($_) for @$inputs }) / @$inputs;
    my $us_d = best_time(sub { $decompress->($_) for @$frames }) / @$frames;
    return { bytes => sum_length($frames), us_compress => round($us_c, 1),
             us_decompress => round($us_d, 1) };
}

# Each value compressed alone, checked to come back whole.
sub compress_all {
    my ($inputs, $codec) = @_;
    my @frames = map { $codec->{compress}->($_) } @$inputs;
    for my $i (0 .. $#frames) {
        my $back = $codec->{decompress}->($frames[$i]);
        defined $back && $back eq $inputs->[$i]
            or fail('internal error: a value did not come back whole from its compression');
    }
    return \@frames;
}

# Microseconds one call of $code takes: the fastest of $ROUNDS rounds, each
# of as many calls as fill $ROUND_TIME seconds (so that a few small values
# are not timed by one tick of the clock or one interruption). The first
# call, which counts the calls of a round, is the first round when it
# lasted one already.
sub best_time {
    my ($code) = @_;
    my $t0 = Time::HiRes::time();
    $code->();
    my $once = Time::HiRes::time() - $t0;
    my $calls = $once > 0 ? int($ROUND_TIME / $once) + 1 : $CALLS_IF_INSTANT;
    my $best = $once >= $ROUND_TIME ? $once : undef;
    for (($best ? 2 : 1) .. $ROUNDS) {
        $t0 = Time::HiRes::time();
        $code->() for 1 .. $calls;
        my $t = (Time::HiRes::time() - $t0) / $calls;
        $best = $t if !defined $best || $t < $best;
    }
    return 1e6 * $best;
}

# (dictionary bytes) or (undef, why).
sub train {
    my ($values, $size) = @_;
    my $dict = eval { Cache::Memcached::RustXS::Zstd::train_dictionary($values, size => $size) };
    return ($dict) if defined $dict;
    my $why = Cache::Memcached::RustXS::_error_message($@);
    $why =~ s/\Atrain_dictionary: //;
    return (undef, $why);
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Measure - what values take under gzip, zstd and zstd with a dictionary, and how long, for cmrx-dict

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::Measure qw(measure_held_out codecs measure);

    my @values = map { qq({"id":$_,"name":"user$_","plan":"free","tags":["a","b"]}) } 1 .. 400;

    # What cmrx-dict prints: trained on half, measured on the other half
    my $m = measure_held_out(\@values, size => 4096);
    printf "%d values: raw %d, memGzip %d, zstd %d, zstd+dict %d bytes\n",
        $m->{values}, $m->{raw_bytes}, $m->{memGzip}{bytes}, $m->{zstd}{bytes}, $m->{zstd_dict}{bytes};

    # Any values, any codecs
    my $measured = measure([ @values[0 .. 99] ], codecs());
    print "memGzip: $measured->{memGzip}{us_compress} us a value\n";

=head1 DESCRIPTION

The measuring of L<cmrx-dict> (its manual says how values are measured):
each value compressed alone by each codec, checked to decompress to what
it was, its bytes summed, and the time each takes per value. Which values
are measured is L<Cache::Memcached::RustXS::Dict::Sample>'s business, and
printing them L<Cache::Memcached::RustXS::Dict::Report::Values>'s.

A codec is C<< { compress => sub { ... }, decompress => sub { ... } } >>:
functions of one string of bytes to another, C<decompress> giving C<undef>
for what it cannot read.

=head1 FUNCTIONS

Exported on request: every function below.

=over 4

=item measure_held_out(\@values, size => 16384)

Splits the values, and measures memGzip and zstd on the held-out half, and
zstd with a dictionary of at most C<size> bytes trained on the other half
(and loaded for the process). Returns C<values>, C<raw_bytes>,
C<trained_on>, C<training_bytes>, and C<memGzip>, C<zstd>, C<zstd_dict> as
L</measure_codec(\@inputs, $codec)> returns them (C<zstd_dict> with
C<dictionary_bytes>), or, when zstd cannot train on the training half,
C<zstd_dict_error> saying why. No codec is measured without a held-out
value.

=item measure_held_out(\@values, keys => \@keys, tune => { memory => $model, keys => $count, ... })

The same split and measures, but the dictionary is the one
L<Cache::Memcached::RustXS::Dict::Tune/"tune(%options)"> chooses on the training half
(with the options in C<tune>, and the values' keys, C<keys>, as the
samples' keys; a value without one is measured under a 17-byte key), at
its level, loaded under a 4-byte ID: what plain C<cmrx-dict report> and
C<train> print. C<zstd_dict> then also has the choice's C<method>, C<size>
(asked), C<level>, C<k> and C<d>, and C<keys_counted>; C<zstd_dict_error>
says why there is none (too few values, none fast enough), and
C<zstd_dict_refused> why the choice is not worth a dictionary
(L<Cache::Memcached::RustXS::Dict::Tune/worth_a_dictionary($tuned, $keys)>),
when it is not.
With C<< frame_sizes => \@sizes >>, C<@sizes> is filled with the size of
each held-out value's frame with the chosen dictionary at its level (left
empty when there is no choice): what
L<Cache::Memcached::RustXS::Dict::SettingsAdvisor> forecasts memcached's memory
with.

=item codecs(dictionary => $id)

The codecs cmrx-dict measures, by name: C<memGzip> (Compress::Zlib's
C<memGzip> and C<memGunzip>, what both clients store), C<zstd> (level 3,
C<$Cache::Memcached::RustXS::Dict::Measure::ZSTD_LEVEL>) and, with a
loaded dictionary's ID, C<zstd_dict> (the same level, with it).

=item measure(\@inputs, \%codecs)

L</measure_codec(\@inputs, $codec)> of each codec: C<< { name => result } >>.

=item measure_codec(\@inputs, $codec)

C<< { bytes, us_compress, us_decompress } >>: the bytes of the inputs
compressed one by one (L</compress_all(\@inputs, $codec)>), and the
microseconds per input each way, the fastest of three rounds of at least
5 ms each.

=item best_time(sub { ... })

The microseconds one call of the function takes: the fastest of three
rounds, each of as many calls as fill 5 ms (so that a few small values are
not timed by one tick of the clock or one interruption); the first call,
which counts them, is the first round when it lasted 5 ms itself.

=item compress_all(\@inputs, $codec)

The inputs compressed one by one, in order, each checked to decompress to
what it was (an internal error fails otherwise): their sizes are what each
would take.

=item train(\@values, $size)

C<($dictionary_bytes)> trained by
L<Cache::Memcached::RustXS::Zstd/train_dictionary(\@samples, size =E<gt> 16384)>,
or C<(undef, $why)> when zstd cannot train on them.

=back

=head1 SEE ALSO

L<cmrx-dict>'s "How values are measured"; the codecs measured,
L<Cache::Memcached::RustXS::Zstd> and L<Compress::Zlib>.

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
