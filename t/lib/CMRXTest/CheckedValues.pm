package CMRXTest::CheckedValues;

# Test helper: cache values that say their key, their length and a
# checksum, so that any value read back can be checked on its own, whoever
# wrote it. See the POD at the end of the file.

use strict;
use warnings;

use Digest::MD5 qw(md5 md5_hex);
use Exporter 'import';
use Storable ();

our $VERSION   = '0.01';
our @EXPORT_OK = qw(checked_value check_value value_kinds);

my $POOL_SIZE = 1_048_576;    # bytes of each payload pool
my $SUM_HEX   = 8;            # hex digits of MD5 kept in a value
my $PREVIEW   = 24;           # bytes of a bad value shown in a reason

# Words of the compressible pool, protocol lines among them: a data block
# may hold anything, "\r\nEND\r\n" and "VALUE ..." included.
my @WORDS = ((map { "word$_" } 1 .. 200), qw(the of and cache memcached value),
             "\r\n", "\r\nEND\r\n", "VALUE k1 0 5\r\n", "\0", "\r", "\n");

my ($NOISE, $TEXT);

# An incompressible pool (an MD5 chain) and a compressible one (words picked
# by the noise): built once per process, the same in every process.
sub _pools {
    return if defined $NOISE;
    my @blocks;
    my $block = 'CMRXTest::CheckedValues';
    push @blocks, $block = md5($block) for 1 .. $POOL_SIZE / 16;
    $NOISE = join '', @blocks;
    my @text;
    my $length = 0;
    for my $pick (unpack 'n*', $NOISE) {
        my $word = $WORDS[ $pick % @WORDS ];
        push @text, $word;
        last if ($length += 1 + length $word) >= $POOL_SIZE;
    }
    $TEXT = join ' ', @text;
    return;
}

sub value_kinds { qw(text noise storable) }

# A value for $key with a payload of $size bytes: 'text' (compresses well),
# 'noise' (does not: stored raw above any threshold) or 'storable' (a hash
# reference, stored as a Storable image, with a text or noise payload).
sub checked_value {
    my ($key, $size, $kind) = @_;
    _pools();
    $size = $POOL_SIZE if $size > $POOL_SIZE;
    my $pool = $kind eq 'text' || ($kind eq 'storable' && rand() < 0.5)
             ? \$TEXT : \$NOISE;
    my $payload = substr $$pool, int(rand(1 + length($$pool) - $size)), $size;
    my $sum = substr md5_hex($payload), 0, $SUM_HEX;
    return { key => $key, length => $size, sum => $sum, payload => $payload }
        if $kind eq 'storable';
    return "$key $size $sum|$payload";
}

# '' when $got is a good value of $key (either form), else what is wrong
# with it. undef is a miss, not a wrong value: the caller counts it.
sub check_value {
    my ($key, $got) = @_;
    return 'undef' unless defined $got;
    if (ref $got) {
        return 'a ' . ref($got) . ' reference, not a HASH' unless ref $got eq 'HASH';
        my @want = qw(key length payload sum);
        my @have = sort keys %$got;
        return "a hash with keys (@have), not (@want)" unless "@have" eq "@want";
        return _check_payload($key, @$got{qw(key length sum payload)});
    }
    return 'still compressed (gzip): ' . _preview($got) if $got =~ /\A\x1f\x8b/;
    return 'still compressed (zstd): ' . _preview($got) if $got =~ /\A\x28\xb5\x2f\xfd/;
    my ($head_key, $length, $sum) = $got =~ /\A(\S+) ([0-9]+) ([0-9a-f]{$SUM_HEX})\|/
        or return (ref eval { Storable::thaw($got) } ? 'a Storable image, not thawed: '
                                                     : 'not a checked value: ')
                . _preview($got);
    return _check_payload($key, $head_key, $length, $sum, substr $got, $+[0]);
}

sub _check_payload {
    my ($key, $head_key, $length, $sum, $payload) = @_;
    return "the value of key '$head_key' under key '$key'" if $head_key ne $key;
    my $have = length $payload;
    if ($have != $length) {
        return "raw: ends with the data block's \"\\r\\n\" ($have bytes for $length)"
            if $have == $length + 2 && substr($payload, -2) eq "\r\n";
        return $have < $length ? "truncated: $have of $length bytes"
                               : "too long: $have bytes for $length";
    }
    return "checksum mismatch ($length bytes)"
        if substr(md5_hex($payload), 0, $SUM_HEX) ne $sum;
    return '';
}

sub _preview {
    my ($bytes) = @_;
    my $hex = unpack 'H*', substr $bytes, 0, $PREVIEW;
    return length($bytes) . " bytes, starting $hex";
}

1;

__END__

=head1 NAME

CMRXTest::CheckedValues - cache values that can be checked on their own

=head1 SYNOPSIS

    use lib 't/lib';
    use CMRXTest::CheckedValues qw(checked_value check_value);

    $client->set(k7 => checked_value('k7', 5_000, 'text'));
    my $got = $client->get('k7');
    if (defined $got) {
        my $wrong = check_value('k7', $got);
        fail "k7: $wrong" if length $wrong;
    }

=head1 DESCRIPTION

Many processes write and read the same keys through faults, so a reader
cannot know which value it should get. Each value says what it must be
instead: a string value is C<"KEY LENGTH SUM|PAYLOAD">, a Storable value a
hash C<< { key, length, sum, payload } >>, where SUM is the first 8 hex
digits of the payload's MD5. Payloads are taken at random offsets of two
1 MiB pools built the same way in every process: one of words (compresses
well; it holds C<"\r\nEND\r\n">, C<"VALUE k1 0 5\r\n">, NUL, CR and LF too,
as a data block may), one of MD5 output (does not compress, so it is stored
raw above any compression threshold).

=head1 FUNCTIONS

=over 4

=item C<checked_value($key, $size, $kind)>

A value for C<$key> with C<$size> bytes of payload (at most 1 MiB).
C<$kind> is C<text> (compressible), C<noise> (incompressible) or
C<storable> (a hash reference, with either payload).

=item C<check_value($key, $got)>

The empty string when C<$got> is a good value of C<$key>, in either form;
else a reason: C<undef> (a miss, for the caller to count as one), still
compressed (gzip or zstd magic), a Storable image not thawed, not a checked
value, the value of another key, raw (the data block's C<"\r\n"> kept),
truncated, too long, checksum mismatch. Reasons about unreadable bytes
show the first 24 of them in hex.

=item C<value_kinds>

C<text>, C<noise>, C<storable>.

=back

=cut
