#!/usr/bin/perl
# The two caps on decompressed sizes: $Cache::Memcached::RustXS::MaxDecodedSize
# caps what decoding a stored value makes (zstd, GetParser, decode_compressed,
# the compress_methods readers, Zstd's and Zlib's); while it is undef,
# $Cache::Memcached::RustXS::Zlib::MaxOutput caps them too. $MaxOutput alone caps
# memGunzip and uncompress.
use strict;
use warnings;

use lib 't/lib';
use Test::More;
use Compress::Zlib ();
use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Zlib ();
use Cache::Memcached::RustXS::Zstd ();
use CMRXTest::DevLib;
use CMRXDev::GetResponse qw(response_values);

no warnings 'once';

my $SIZE  = 200_000;
my $VALUE = join '', map { chr(32 + $_ % 90) } 1 .. $SIZE;
my $ZSTD  = Cache::Memcached::RustXS::Zstd::compress($VALUE);
my $GZIP  = Compress::Zlib::memGzip($VALUE);
my $ZLIB  = Compress::Zlib::compress($VALUE);

# What each reader of stored values makes of $ZSTD: the value, or undef.
my %stored_reader = (
    'Zstd::decompress'  => sub { Cache::Memcached::RustXS::Zstd::decompress($ZSTD) },
    'decode_compressed' => sub { (Cache::Memcached::RustXS::decode_compressed($GZIP))[0] },
    'GetParser'         => sub {
        my $response = 'VALUE k 2 ' . length($GZIP) . "\r\n$GZIP\r\nEND\r\n";
        my ($item) = @{ response_values($response) };
        return $item ? $item->[2] : undef;
    },
    'Zstd compress_methods reader'       => sub { methods_read(\&Cache::Memcached::RustXS::Zstd::compress_methods, $ZSTD) },
    'Zlib compress_methods reader, gzip' => sub { methods_read(\&Cache::Memcached::RustXS::Zlib::compress_methods, $GZIP) },
    'Zlib compress_methods reader, zstd' => sub { methods_read(\&Cache::Memcached::RustXS::Zlib::compress_methods, $ZSTD) },
);
# What the reader of the compress_methods that $make makes now, under
# today's caps, makes of $stored: the value, or undef.
sub methods_read {
    my ($make, $stored) = @_;
    my (undef, $decompress) = @{ $make->() };
    my $out;
    return $decompress->(\$stored, \$out) ? $out : undef;
}

# What each Compress::Zlib-compatible decoder makes of its input.
my %zlib_reader = (
    memGunzip  => sub { Cache::Memcached::RustXS::Zlib::memGunzip($GZIP) },
    uncompress => sub { Cache::Memcached::RustXS::Zlib::uncompress($ZLIB) },
);

is $Cache::Memcached::RustXS::MaxDecodedSize, undef, '$MaxDecodedSize is undef by default';
for my $name (sort keys %stored_reader, sort keys %zlib_reader) {
    my $reader = $stored_reader{$name} || $zlib_reader{$name};
    is $reader->(), $VALUE, "$name: decodes $SIZE bytes under the default caps";
}

{   # Zlib's cap alone, as a program that sets only it.
    local $Cache::Memcached::RustXS::Zlib::MaxOutput = $SIZE - 1;
    for my $name (sort keys %stored_reader, sort keys %zlib_reader) {
        my $reader = $stored_reader{$name} || $zlib_reader{$name};
        is $reader->(), undef, "\$MaxOutput one byte short, \$MaxDecodedSize undef: $name gives undef";
    }
    local $Cache::Memcached::RustXS::MaxDecodedSize = $SIZE;
    for my $name (sort keys %stored_reader) {
        is $stored_reader{$name}->(), $VALUE, "\$MaxDecodedSize exactly the size overrides it: $name decodes";
    }
    for my $name (sort keys %zlib_reader) {
        is $zlib_reader{$name}->(), undef, "... $name still keeps to \$MaxOutput";
    }
}

{   # The new name alone.
    local $Cache::Memcached::RustXS::MaxDecodedSize = $SIZE - 1;
    for my $name (sort keys %stored_reader) {
        is $stored_reader{$name}->(), undef, "\$MaxDecodedSize one byte short: $name gives undef";
    }
    for my $name (sort keys %zlib_reader) {
        is $zlib_reader{$name}->(), $VALUE, "... $name keeps to \$MaxOutput and decodes";
    }
}

{   # A cap that is not a size croaks, naming the variable.
    local $Cache::Memcached::RustXS::MaxDecodedSize = -1;
    ok !eval { Cache::Memcached::RustXS::Zstd::decompress($ZSTD); 1 }, 'a negative $MaxDecodedSize croaks';
    like $@, qr/\A\$Cache::Memcached::RustXS::MaxDecodedSize must be a size in bytes, not -1/,
        '... naming it';
}

done_testing;
