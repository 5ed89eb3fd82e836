#!/usr/bin/perl
# Compression levels and defaults are the engine's: rust/cmrx.h (generated
# from the Rust constants; cargo test fails when it drifts) states them, the
# built module accepts exactly those levels and its croaks name those
# ranges, and every level range and default the modules' POD states is one
# of them. So are the training methods' codes and the default level that
# Zstd.pm has from the XS (_constants).
use strict;
use warnings;
use lib 't/lib';
use Test::More;
use Cache::Memcached::RustXS::Zlib ();
use Cache::Memcached::RustXS::Zstd ();
use CMRXTest::Modules qw(modules module_file);

# ---- the engine's numbers, from the generated part of cmrx.h ------------------

my %h;
{
    open my $fh, '<', 'rust/cmrx.h' or die "rust/cmrx.h: $!";
    my $in;
    while (<$fh>) {
        $in = 1 if m{^/\* BEGIN GENERATED};
        $in = 0 if m{^/\* END GENERATED};
        $h{$1} = $2 if $in && /^#define (CMRX_\w+)\s+\(?(-?\d+)\)?\s*$/;
    }
}
my @names = qw(CMRX_GZIP_MIN_LEVEL CMRX_GZIP_MAX_LEVEL CMRX_ZLIB_MIN_LEVEL CMRX_ZLIB_MAX_LEVEL
               CMRX_ZSTD_MIN_LEVEL CMRX_ZSTD_MAX_LEVEL CMRX_DEFLATE_USE_DEFAULT_LEVEL CMRX_GZIP_DEFAULT_LEVEL
               CMRX_ZLIB_DEFAULT_LEVEL CMRX_ZSTD_DEFAULT_LEVEL CMRX_DEFAULT_MAX_OUTPUT);
is_deeply [ grep { !defined $h{$_} } @names ], [], 'cmrx.h states every level range and default';
my ($GZ_MIN, $GZ_MAX, $Z_MIN, $Z_MAX, $ZS_MIN, $ZS_MAX) = @h{@names[0 .. 5]};

# ---- the built module accepts exactly those ----------------------------------------

{
    my $Zstd = 'Cache::Memcached::RustXS::Zstd';
    for my $level ($ZS_MIN, -1, 0, 1, $ZS_MAX) {
        ok eval { Cache::Memcached::RustXS::Zstd::compress('x', level => $level); 1 },
            "zstd level $level is accepted";
        ok eval { Cache::Memcached::RustXS::Zstd::compress_methods(level => $level); 1 },
            "... by compress_methods too";
    }
    my $range = qr/level must be 0 \(the default\), 1 to \Q$ZS_MAX\E or -1 to \Q$ZS_MIN\E, not /;
    for my $level ($ZS_MIN - 1, $ZS_MAX + 1) {
        ok !eval { Cache::Memcached::RustXS::Zstd::compress('x', level => $level); 1 }, "zstd level $level croaks";
        like $@, qr/\A\Q${Zstd}::compress: \E$range\Q$level\E at /, '... naming the range';
        ok !eval { Cache::Memcached::RustXS::Zstd::compress_methods(level => $level); 1 },
            '... in compress_methods too';
        like $@, qr/compress_methods: $range\Q$level\E at /, '... naming the range';
    }
}

{
    local $Cache::Memcached::RustXS::Zlib::Level;
    for my $level ($h{CMRX_DEFLATE_USE_DEFAULT_LEVEL}, $GZ_MIN, $GZ_MAX) {
        $Cache::Memcached::RustXS::Zlib::Level = $level;
        ok defined Cache::Memcached::RustXS::Zlib::memGzip('x'), "gzip level $level: memGzip works";
        ok eval { Cache::Memcached::RustXS::Zlib::compress_methods(level => $level); 1 },
            '... and compress_methods accepts it';
    }
    my $range = qr/level must be \Q$h{CMRX_DEFLATE_USE_DEFAULT_LEVEL}\E \(the default\) or \Q$GZ_MIN\E to \Q$GZ_MAX\E, not /;
    for my $level ($GZ_MIN - 2, $GZ_MAX + 1) {
        $Cache::Memcached::RustXS::Zlib::Level = $level;
        ok !defined Cache::Memcached::RustXS::Zlib::memGzip('x'), "gzip level $level: memGzip gives undef";
        ok !eval { Cache::Memcached::RustXS::Zlib::compress_methods(level => $level); 1 },
            '... and compress_methods croaks';
        like $@, qr/compress_methods: $range\Q$level\E at /, '... naming the range';
    }
    for my $level ($h{CMRX_DEFLATE_USE_DEFAULT_LEVEL}, $Z_MIN, $Z_MAX) {
        ok defined Cache::Memcached::RustXS::Zlib::compress('x', $level), "zlib level $level: compress works";
    }
    ok !defined Cache::Memcached::RustXS::Zlib::compress('x', $_), "zlib level $_: compress gives undef"
        for $Z_MIN - 2, $Z_MAX + 1;
}

is_deeply { Cache::Memcached::RustXS::_level_ranges() },
    { gzip_min => $GZ_MIN, gzip_max => $GZ_MAX, zlib_min => $Z_MIN, zlib_max => $Z_MAX,
      zstd_min => $ZS_MIN, zstd_max => $ZS_MAX },
    'the ranges the Perl code checks with (a dictionary set\'s manifest) are cmrx.h\'s';

{
    my %shared = Cache::Memcached::RustXS::_constants();
    is_deeply [ @shared{qw(TRAIN_FASTCOVER TRAIN_COVER TRAIN_SAMPLES ZSTD_DEFAULT_LEVEL)} ],
        [ @h{qw(CMRX_TRAIN_FASTCOVER CMRX_TRAIN_COVER CMRX_TRAIN_SAMPLES CMRX_ZSTD_DEFAULT_LEVEL)} ],
        'the training methods\' codes and the default level Zstd.pm trains at are cmrx.h\'s';
    is Cache::Memcached::RustXS::Zstd::train_dictionary_with_parameters(
           [ map { "sample $_ " x 20 } 1 .. 50 ], size => 1024, method => 'samples')->{level},
        $h{CMRX_ZSTD_DEFAULT_LEVEL}, '... and a training reports that level';
}

is $Cache::Memcached::RustXS::Zlib::MaxOutput, $h{CMRX_DEFAULT_MAX_OUTPUT}, '$MaxOutput starts at the engine\'s default';
is length(Cache::Memcached::RustXS::Zlib::memGzip('x' x 1000)),
   length(do { local $Cache::Memcached::RustXS::Zlib::Level = $h{CMRX_GZIP_DEFAULT_LEVEL};
               Cache::Memcached::RustXS::Zlib::memGzip('x' x 1000) }),
   'memGzip\'s default level is CMRX_GZIP_DEFAULT_LEVEL';

# ---- what the POD says ---------------------------------------------------------------

# Every range of integers ("A to B") in a POD sentence about levels is one
# the engine has: zstd's positive, fast or all levels, libdeflate's, zlib's,
# or the levels libdeflate has beyond zlib's.
my %ranges = map { ("$_->[0] to $_->[1]" => 1) }
    [1, $ZS_MAX], [-1, $ZS_MIN], [$ZS_MIN, $ZS_MAX], [$GZ_MIN, $GZ_MAX], [$Z_MIN, $Z_MAX],
    [$Z_MAX + 1, $GZ_MAX];

# What the POD says the defaults are, in the phrasings it uses.
my $MIB = $h{CMRX_DEFAULT_MAX_OUTPUT} / (1 << 20);
my @defaults = (
    [ qr/\b0 for the default, (\d+)/,              $h{CMRX_ZSTD_DEFAULT_LEVEL} ],
    [ qr/\b0 \(the default\) for (\d+)/,           $h{CMRX_ZSTD_DEFAULT_LEVEL} ],
    [ qr/-1 for the default \((\d+)\)/,            $h{CMRX_GZIP_DEFAULT_LEVEL} ],
    [ qr/C<memGzip> uses, (\d+) by default/,      $h{CMRX_GZIP_DEFAULT_LEVEL} ],
    [ qr/-1 \(the default, meaning (\d+)\) to \d/, $h{CMRX_ZLIB_DEFAULT_LEVEL} ],
    [ qr/-1 \(the default, meaning \d+\) to (\d+)/, $Z_MAX ],
    [ qr/Max(?:Output|DecodedSize)>(?: bytes)? \((\d+) MiB by default/, $MIB ],
    [ qr/max_output (?:=>|=E<gt>) (\d+) MiB/,      $MIB ],
    [ qr/will produce: (\d+) MiB by default/,      $MIB ],
);

my ($ranges_seen, %defaults_seen) = (0);
for my $module (modules()) {
    my $text = do { local (@ARGV, $/) = (module_file($module)); <> };
    my ($pod) = $text =~ /^(=head1 .*)/ms or next;
    for my $para (split /\n\s*\n/, $pod) {
        (my $flat = $para) =~ s/\s+/ /g;
        for my $sentence (split /(?<=[.;])\s+(?=[A-Z])/, $flat) {
            next unless $sentence =~ /\blevels?\b/i;
            while ($sentence =~ /(?<![\d.])(-?\d+) to (-?\d+)(?![\d.])(?!\s?%)/g) {    # not percentages
                $ranges_seen++;
                ok $ranges{"$1 to $2"}, "$module: \"$1 to $2\" is a range of levels the engine has";
            }
        }
        for my $d (0 .. $#defaults) {
            my ($re, $want) = @{ $defaults[$d] };
            while ($flat =~ /$re/g) {
                $defaults_seen{$d}++;
                is $1, $want, "$module: \"$&\" says $want";
            }
        }
    }
}
cmp_ok $ranges_seen, '>=', 5, "the POD states $ranges_seen level ranges, all checked";
is_deeply [ grep { !$defaults_seen{$_} } 0 .. $#defaults ], [],
    'every phrasing of a default above occurs in the POD (or this list is stale)';

done_testing;
