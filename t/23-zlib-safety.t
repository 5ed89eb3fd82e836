#!/usr/bin/perl
# The Zlib functions under perl code that runs inside them or dies: results
# leak nothing when a target or $gzerrno refuses them, get-magic runs before
# any check (a tied argument holding a reference, tied tunables), and the
# override of Compress::Zlib::memGunzip consumes its argument exactly as
# Compress::Zlib's does, so loops over concatenated members end.
use strict;
use warnings;

use lib 't/lib';
use Compress::Zlib ();
use Test::More;

use Cache::Memcached::RustXS::Zlib qw(memGzip memGunzip compress uncompress);
use CMRXTest::LeakCheck qw(no_leaks);

my $Z = 'Cache::Memcached::RustXS::Zlib';
my $TEXT = join ' ', map { "word$_" } 1 .. 2000;

{
    package DyingStore;
    sub TIESCALAR { bless [], shift }
    sub FETCH { $_[0][0] }
    sub STORE { die "no store\n" }

    package HoldsValue;
    sub TIESCALAR { my ($class, $v) = @_; bless [$v], $class }
    sub FETCH { $_[0][0] }
}

{   # Fast's methods writing into a target that refuses the result.
    my ($c, $d) = @{ Cache::Memcached::RustXS::Zlib::compress_methods() };
    my $gz = memGzip($TEXT);
    ok !eval { $c->(\$TEXT, \"read-only"); 1 }, 'compress into a read-only target croaks';
    like $@, qr/read-only/, '... as perl says';
    no_leaks('compress into a read-only target: nothing leaks', sub { eval { $c->(\$TEXT, \"read-only") } });
    no_leaks('decompress into a read-only target: nothing leaks', sub { eval { $d->(\$gz, \"read-only") } });
    tie my $dying, 'DyingStore';
    ok !eval { $d->(\$gz, \$dying); 1 }, 'decompress into a target whose STORE dies: dies';
    is $@, "no store\n", '... with its error';
    no_leaks('compress into a dying STORE: nothing leaks', sub { eval { $c->(\$TEXT, \$dying) } });
    no_leaks('decompress into a dying STORE: nothing leaks', sub { eval { $d->(\$gz, \$dying) } });
}

{   # $gzerrno refusing to be set after a gunzip.
    my $gz = memGzip($TEXT);
    my $run = sub {
        tie local $Compress::Zlib::gzerrno, 'DyingStore';
        eval { memGunzip($gz) };
        return $@;
    };
    is $run->(), "no store\n", 'memGunzip with a $gzerrno whose STORE dies: dies';
    no_leaks('memGunzip with a dying $gzerrno: nothing leaks', $run);
}

{   # Get-magic before the reference test: a tied argument holding \$data.
    my $data = 'the real data ' x 50;
    tie my $arg, 'HoldsValue', \$data;
    is memGunzip(memGzip($arg)), $data, 'memGzip(tied holding \$data) compresses $data';
    tie my $garg, 'HoldsValue', \memGzip($data);
    is memGunzip($garg), $data, 'memGunzip(tied holding a reference) gunzips what it refers to';
    tie my $zarg, 'HoldsValue', \compress($data);
    is uncompress($zarg), $data, 'uncompress(tied holding a reference)';
}

{   # Tied tunables are fetched, not skipped.
    my $gz = memGzip('0123456789' x 10);
    tie local $Cache::Memcached::RustXS::Zlib::MaxOutput, 'HoldsValue', 10;
    is memGunzip($gz), undef, 'a tied MaxOutput of 10 caps memGunzip';
    is uncompress(compress('0123456789' x 10)), undef, '... and uncompress';
}
{
    my $stored = memGzip($TEXT);
    tie local $Cache::Memcached::RustXS::Zlib::Level, 'HoldsValue', 0;
    my $level0 = memGzip($TEXT);
    cmp_ok length($level0), '>', length($TEXT), 'a tied Level of 0 stores (the level was read)';
    is memGunzip($level0), $TEXT, '... and it gunzips';
}

{   # The defaults come from the engine, and undef means the default.
    is $Cache::Memcached::RustXS::Zlib::Level, 6, '$Level starts at 6';
    is $Cache::Memcached::RustXS::Zlib::MaxOutput, 64 << 20, '$MaxOutput starts at 64 MiB';
    my $default = memGzip($TEXT);
    local $Cache::Memcached::RustXS::Zlib::Level;
    is memGzip($TEXT), $default, 'an undef $Level is the default level';
}

# ---- the override's memGunzip consumes as Compress::Zlib's does --------

my $orig_memGunzip = \&Compress::Zlib::memGunzip;
Cache::Memcached::RustXS::Zlib::override_compress_zlib();
END { Cache::Memcached::RustXS::Zlib::restore_compress_zlib() }

{   # A loop over concatenated members ends, and reads each member.
    my @parts = map { "member $_ " x $_ } 1 .. 5;
    my $gz = join '', map { memGzip($_) } @parts;
    my @got;
    while (length $gz) {
        my $out = Compress::Zlib::memGunzip($gz);
        last unless defined $out;
        push @got, $out;
        last if @got > 10;
    }
    is_deeply \@got, \@parts, 'overridden memGunzip in a loop over members: ends, each member once';
    is $gz, '', '... and the variable is empty at the end';
}

{   # What is left in the variable, the result and $gzerrno, case by case,
    # against Compress::Zlib's own memGunzip.
    my $good = memGzip('payload' x 100);
    my $bad_crc = $good;
    substr($bad_crc, -8, 1) ^= "\x01";
    my %cases = (
        'one member'          => $good,
        'member and garbage'  => $good . 'trailing bytes here',
        'two members'         => $good . memGzip('second'),
        'no trailer'          => substr($good, 0, -8),
        'partial trailer'     => substr($good, 0, -5),
        'bad crc'             => $bad_crc,
        'bad magic'           => "\x1f\x8c" . substr($good, 2),
        'truncated header'    => substr($good, 0, 5),
        'truncated stream'    => substr($good, 0, 30),
        'empty'               => '',
        'named member'        => "\x1f\x8b\x08\x08\0\0\0\0\0\xffname\0" . substr($good, 10),
    );
    for my $name (sort keys %cases) {
        my ($ours_in, $theirs_in) = ($cases{$name}) x 2;
        my $ours = Compress::Zlib::memGunzip($ours_in);
        my $ours_err = 0 + $Compress::Zlib::gzerrno;
        my $theirs = $orig_memGunzip->($theirs_in);
        my $theirs_err = 0 + $Compress::Zlib::gzerrno;
        is $ours, $theirs, "$name: the same result";
        is $ours_in, $theirs_in, "$name: the same bytes left in the variable";
        is $ours_err, $theirs_err, "$name: the same \$gzerrno";
        my ($ref_ours, $ref_theirs) = ($cases{$name}) x 2;
        Compress::Zlib::memGunzip(\$ref_ours);
        $orig_memGunzip->(\$ref_theirs);
        is $ref_ours, $ref_theirs, "$name, by reference: the same bytes left";
    }
}

{   # Our own memGunzip keeps its documented behaviour: the input stays.
    my $gz = memGzip('kept') . 'tail';
    is memGunzip($gz), 'kept', "our memGunzip reads the member";
    is $gz, memGzip('kept') . 'tail', '... and leaves its argument alone';
}

done_testing;
