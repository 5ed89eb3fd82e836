#!/usr/bin/perl
# Cache::Memcached::RustXS::decode_compressed: a value stored compressed, in
# whichever of gzip, zlib and zstd it is, told by its magic number and
# decoded by the engine. Checked against the real peers that write and read
# those formats: Compress::Zlib (memGzip and compress at every level, and
# memGunzip and uncompress as the reference decoders), IO::Compress::Gzip
# (optional header fields), gzip(1) and zstd(1) when installed; and against
# this test's own reading of the magic numbers (RFC 1950, 1952, 8878).
use strict;
use warnings;

use lib 't/lib';
use Test::More;
use Compress::Zlib ();
use File::Spec ();
use File::Temp ();
use IO::Compress::Gzip ();
use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Zstd qw(compress train_dictionary load_dictionary frame_dictionary_id);
use CMRXTest::Peers qw(slurp run_filter have_gzip);
use CMRXTest::LeakCheck qw(no_leaks);

my @WARNINGS;
$SIG{__WARN__} = sub { push @WARNINGS, $_[0] };

*decode = \&Cache::Memcached::RustXS::decode_compressed;

my $HAVE_ZSTD = !system('sh', '-c', 'zstd --version >/dev/null 2>&1');
my $JSON = slurp('t/data/seed.json');
my @VALUES = ($JSON, 'a short value', '', "binary \0\x01\xff" x 50, 'x' x 100_000);

# This test's own reading of the magic numbers, as a reader of values that
# memcached flagged compressed tells the formats apart.
sub format_by_hand {
    my ($bytes) = @_;
    return 'zstd' if substr($bytes, 0, 4) eq "\x28\xb5\x2f\xfd";
    return 'gzip' if substr($bytes, 0, 2) eq "\x1f\x8b";
    return undef if length $bytes < 2;
    my ($cmf, $flg) = unpack 'C2', $bytes;
    return ($cmf & 0x0f) == 8 && ($cmf * 256 + $flg) % 31 == 0 ? 'zlib' : undef;
}

# ---- every format, as the peers write it ------------------------------------

my @cases;    # [name, stored bytes, format, value]
for my $v (@VALUES) {
    my $tag = length($v) . ' bytes';
    push @cases, [ "memGzip, $tag", Compress::Zlib::memGzip($v), 'gzip', $v ];
    push @cases, map { [ "compress level $_, $tag", Compress::Zlib::compress($v, $_), 'zlib', $v ] } 0 .. 9;
    push @cases, [ "zstd level 3, $tag", compress($v), 'zstd', $v ];
    push @cases, [ "zstd level 19, $tag", compress($v, level => 19), 'zstd', $v ];
}
{
    my $gz;
    IO::Compress::Gzip::gzip(\$JSON => \$gz, Name => 'seed.json', Comment => 'a comment',
                             ExtraField => [ ab => 'xyz' ], HeaderCRC => 1, Minimal => 0)
        or die $IO::Compress::Gzip::GzipError;
    push @cases, [ 'IO::Compress::Gzip with FNAME, FCOMMENT, FEXTRA, FHCRC', $gz, 'gzip', $JSON ];
}
SKIP: {
    skip 'gzip(1) is not installed', 1 unless have_gzip();
    my (undef, $gz) = run_filter($JSON, 'gzip', '-9', '-c');
    push @cases, [ 'gzip -9', $gz, 'gzip', $JSON ];
    ok length $gz > 18 && substr($gz, 0, 2) eq "\x1f\x8b", 'gzip(1) wrote a member';
}
my @samples = map { qq({"id":$_,"name":"user$_","plan":"free","tags":["a","b"],"n":) . ($_ * 7 % 100) . '}' } 1 .. 300;
my $dict_file = File::Spec->catfile(File::Temp::tempdir(CLEANUP => 1), 'users.dict');
{
    open my $fh, '>:raw', $dict_file or die $!;
    print {$fh} train_dictionary(\@samples, size => 4096);
    close $fh or die $!;
}
my $ID = load_dictionary($dict_file);
push @cases, [ 'zstd with a loaded dictionary', compress($samples[7], dictionary => $ID), 'zstd', $samples[7] ];
SKIP: {
    skip 'zstd(1) is not installed', 1 unless $HAVE_ZSTD;
    my (undef, $plain) = run_filter($JSON, 'zstd', '-q', '-c');
    my (undef, $dict)  = run_filter($samples[9], 'zstd', '-q', '-c', '-D', $dict_file);
    push @cases, [ 'zstd(1)', $plain, 'zstd', $JSON ], [ 'zstd(1) -D', $dict, 'zstd', $samples[9] ];
    is_deeply [ map { substr $_, 0, 4 } $plain, $dict ], [ ("\x28\xb5\x2f\xfd") x 2 ], 'zstd(1) wrote frames';
}

my (@wrong_value, @wrong_format, @wrong_reading, @wrong_scalar);
for my $case (@cases) {
    my ($name, $stored, $format, $value) = @$case;
    my @got = decode($stored);
    push @wrong_value, $name unless defined $got[0] && $got[0] eq $value;
    push @wrong_format, "$name: " . (defined $got[1] ? $got[1] : 'undef') unless defined $got[1] && $got[1] eq $format;
    push @wrong_reading, $name unless (format_by_hand($stored) || '') eq $format;
    my $scalar = decode($stored);
    push @wrong_scalar, $name unless defined $scalar && $scalar eq $value;
    push @wrong_value, "$name: a third value" if defined $got[2] || @got != 3;
}
cmp_ok scalar @cases, '>=', 67, scalar(@cases) . ' stored values of every format';
is "@wrong_reading", '', "this test's reading of the magic numbers agrees with what wrote them";
is "@wrong_format", '', 'decode_compressed names the format of each';
is "@wrong_value", '', '... and returns the value each holds, and no missing dictionary';
is "@wrong_scalar", '', '... and in scalar context, the value alone';

# The reference decoders agree with the value (so the cases test something).
is Compress::Zlib::memGunzip(my $copy = $cases[0][1]), $cases[0][3], 'Compress::Zlib::memGunzip reads the first case too';

# ---- values that do not decode ----------------------------------------------

my $gz = Compress::Zlib::memGzip($JSON);
my $zl = Compress::Zlib::compress($JSON);
my $zs = compress($JSON);
my $bad_crc = $gz;
substr($bad_crc, -8, 1) ^= "\x01";
my %bad = (
    'gzip, cut'            => [ substr($gz, 0, 40), 'gzip' ],
    'gzip, wrong CRC'      => [ $bad_crc, 'gzip' ],
    'gzip magic alone'     => [ "\x1f\x8b", 'gzip' ],
    'gzip, method 7'       => [ "\x1f\x8b\x07\x00" . ('x' x 40), 'gzip' ],
    'zlib, cut'            => [ substr($zl, 0, 40), 'zlib' ],
    'zlib header, garbage' => [ "\x78\x9c" . ('y' x 30), 'zlib' ],
    'zlib, bad Adler-32'   => [ substr($zl, 0, -1) . chr(ord(substr $zl, -1) ^ 1), 'zlib' ],
    'zstd, cut'            => [ substr($zs, 0, 40), 'zstd' ],
    'zstd, trailing bytes' => [ "$zs!", 'zstd' ],
    'zstd magic, garbage'  => [ "\x28\xb5\x2f\xfd" . ('z' x 30), 'zstd' ],
    'never compressed'     => [ 'this was never compressed', undef ],
    'JSON'                 => [ $JSON, undef ],
    'one byte'             => [ 'x', undef ],
    'empty'                => [ '', undef ],
    'undef'                => [ undef, undef ],
    'a PNG header'         => [ "\x89PNG\r\n\x1a\n" . ('p' x 20), undef ],
    'Storable'             => [ "\x05\x0b\x03\x00\x00\x00\x01\x04\x03\x00\x00\x00\x00", undef ],
);
my (@decoded, @misnamed);
for my $name (sort keys %bad) {
    my ($stored, $format) = @{ $bad{$name} };
    my @got = decode($stored);
    push @decoded, $name if defined $got[0] || defined $got[2];
    push @misnamed, $name unless (defined $got[1] ? $got[1] : '-') eq (defined $format ? $format : '-')
                              && (defined $stored ? format_by_hand($stored) || '-' : '-') eq ($format || '-');
}
is "@decoded", '', 'undef for values that do not decode: ' . join(', ', sort keys %bad);
is "@misnamed", '', '... each with the format its magic number names, or undef for none';

# A frame whose dictionary is not loaded: its ID, and no warning (the
# caller is told, rather than the log).
{
    my $unknown = compress($samples[3], dictionary => $ID);
    my $other = $ID ^ 0x0101;
    my $fdid = frame_dictionary_id($unknown);
    is $fdid, $ID, 'a frame made with the dictionary names it';
    my ($at) = index $unknown, pack('V', $ID);
    substr($unknown, $at, 4) = pack 'V', $other;
    my @got = decode($unknown);
    is_deeply \@got, [ undef, 'zstd', $other ], 'a frame naming a dictionary not loaded: (undef, zstd, its ID)';
    @got = decode($unknown);
    is $got[2], $other, '... every time';
    is "@WARNINGS", '', '... without a warning';
}

# The output cap: $Cache::Memcached::RustXS::Zlib::MaxOutput, as for the
# other decoders.
{
    my $big = 'b' x 200_000;
    local $Cache::Memcached::RustXS::Zlib::MaxOutput = 100_000;
    for my $case ([ gzip => Compress::Zlib::memGzip($big) ], [ zlib => Compress::Zlib::compress($big) ],
                  [ zstd => compress($big) ]) {
        my ($format, $stored) = @$case;
        is_deeply [ decode($stored) ], [ undef, $format, undef ], "$format over MaxOutput: undef";
    }
}

# Arguments: a reference, a tied scalar (fetched once), wide characters.
{
    is decode(\$gz), $JSON, 'a reference to the bytes';
    { package Counting; sub TIESCALAR { bless [ 0, $_[1] ], $_[0] } sub FETCH { $_[0][0]++; $_[0][1] } }
    tie my $tied, 'Counting', $zs;
    is decode($tied), $JSON, 'a tied scalar';
    is tied($tied)->[0], 1, '... fetched once';
    ok !eval { decode("\x{263a}"); 1 }, 'wide characters croak';
    like $@, qr/\AWide character in decode_compressed/, '... saying so';
    my $utf8 = $zs;
    utf8::upgrade($utf8);
    is decode($utf8), $JSON, 'a UTF-8-flagged string of bytes is downgraded';
}

{
    my %ops = (
        gzip    => sub { my @decoded = decode($gz) },
        zstd    => sub { my $decoded = decode($zs) },
        garbage => sub { my @decoded = decode("\x1f\x8b garbage") },
        none    => sub { my @decoded = decode('plain') },
        wide    => sub { eval { decode("\x{263a}") } },
    );
    no_leaks("$_: no SV leaked", $ops{$_}) for sort keys %ops;
}

is "@WARNINGS", '', 'no warning in the whole test';

done_testing;
