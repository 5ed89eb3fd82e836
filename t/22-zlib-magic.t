#!/usr/bin/perl
# Magical arguments and variables: tied scalars, substr() lvalues, overloaded
# tunables, tied output, and $gzerrno set for the first time.
use strict;
use warnings;
use lib 't/lib';
use Test::More;
use Cache::Memcached::RustXS::Zlib qw(memGzip memGunzip compress uncompress);
use CMRXTest::Child qw(run_command);

{   # $gzerrno's first write is a failure: it must become a proper dualvar
    # without touching any other scalar (it used to write past its body).
    my $code = q{
        use Cache::Memcached::RustXS::Zlib qw(memGunzip);
        my @pre = map { "pre$_" } 1 .. 50;
        memGunzip("not gzip");
        my $copy = $pre[49] . "";
        print join ',', length($pre[49]), $copy, 0 + $Compress::Zlib::gzerrno, "$Compress::Zlib::gzerrno";
    };
    my (undef, $out) = run_command([$^X, '-Mblib', '-e', $code]);
    is $out, '5,pre50,-3,data error', 'first gzerrno write: -3 / "data error", neighbours intact';
}

{   # arguments with get-magic
    my $gz = memGzip('payload');
    my $framed = "HDR:$gz";
    is memGunzip(substr($framed, 4)), 'payload', 'memGunzip(substr(...)) reads the substring';
    is uncompress(substr('xx' . compress('p2'), 2)), 'p2', 'uncompress(substr(...))';
    my $text = 'abcdefgh';
    is memGunzip(memGzip(substr($text, 2))), 'cdefgh', 'memGzip(substr(...))';

    { package Counting; sub TIESCALAR { bless [0], shift } sub FETCH { $_[0][0]++; 'fresh tied value' } }
    tie my $tied, 'Counting';
    is memGunzip(memGzip($tied)), 'fresh tied value', 'memGzip(tied scalar) compresses what FETCH gives';
    is tied($tied)->[0], 1, '... fetching it once';
}

{   # an overloaded tunable whose numification frees the input
    our $data = 'A' x 100_000;
    { package FreesData; use overload '0+' => sub { undef $main::data; 6 }, fallback => 1 }
    local $Cache::Memcached::RustXS::Zlib::Level = bless {}, 'FreesData';
    my $gz = memGzip(\$data);
    is length(memGunzip($gz)), 0, 'the level is read before the input: a freed input is empty, never read freed';
}

{   # compress_methods writes through set-magic
    { package Store; sub TIESCALAR { bless [], shift } sub FETCH { $_[0][0] } sub STORE { $_[0][1]++; $_[0][0] = $_[1] } }
    my ($c, $d) = @{ Cache::Memcached::RustXS::Zlib::compress_methods() };
    tie my $out, 'Store';
    my $in = 'hello ' x 100;
    ok $c->(\$in, \$out), 'compress into a tied scalar';
    is tied($out)->[1], 1, '... STORE called once';
    my $back;
    ok $d->(\$out, \$back) && $back eq $in, '... and what was stored decompresses';
}

{   # bad caps
    local $Cache::Memcached::RustXS::Zlib::MaxOutput = -1;
    ok !eval { memGunzip(memGzip('x')); 1 }, 'a negative MaxOutput croaks';
    like $@, qr/MaxOutput must be a size/, '... saying why';
    ok !eval { Cache::Memcached::RustXS::Zlib::compress_methods(max_output => -1); 1 },
        'compress_methods(max_output => -1) croaks';
}

{   # memGzip keeps only the bytes it used
    require Devel::Peek;
    my $gz = memGzip('a' x 1_000_000);
    cmp_ok length($gz), '<', 2000, 'a megabyte of one byte compresses small';
    my $out = '';
    {
        open my $save, '>&', \*STDERR or die;
        close STDERR;
        open STDERR, '>', \$out or die;
        Devel::Peek::Dump($gz);
        close STDERR;
        open STDERR, '>&', $save or die;
    }
    my ($len) = $out =~ /LEN = (\d+)/;
    cmp_ok $len, '<', 4096 + length($gz), '... and does not keep the input-sized buffer (LEN ' . ($len // '?') . ')';
}

done_testing;
