#!/usr/bin/perl
# GetParser under perl code that runs in the middle of a parse and may free,
# change, re-enter or die: the input scalar freed by a store, a tied
# destination whose STORE parses again or dies, a DESTROY of a replaced value
# that parses again, restricted hashes; and the leaks of croak paths, the
# order of get-magic, bytes after END on a chunk boundary, and the reason of
# a failure ($parser->error). Each case here crashed, leaked, misread or
# returned the wrong result before it was fixed.
use strict;
use warnings;

use lib 't/lib';
use Hash::Util ();
use Test::More;

use Cache::Memcached::RustXS::GetParser;
use CMRXTest::LeakCheck qw(no_leaks);

my $CLASS = 'Cache::Memcached::RustXS::GetParser';

sub response { join('', map { "VALUE $_->[0] 0 " . length($_->[1]) . "\r\n$_->[1]\r\n" } @_) . "END\r\n" }

{   # The input is an element of the destination: storing a value frees it.
    my %d;
    my $p = $CLASS->new(\%d, 0);
    $d{x} = "VALUE x 0 1\r\nA\r\nVALUE y 0 300000\r\n" . ("z" x 300000) . "\r\nEND\r\n";
    is $p->parse_from_string($d{x}), 1, 'input freed by the first store: the parse still completes';
    is $d{x}, "A\r\n", '... x is the new value';
    is length($d{y}), 300002, '... y is whole';
    is $d{y}, ('z' x 300000) . "\r\n", '... and right';
}

{   # The input is changed by on_item between two parses: each parse has its own copy.
    my (%d, $input);
    my $p = $CLASS->new(\%d, 0, sub { $input = 'overwritten' x 10_000 });
    $input = "VALUE a 0 3\r\nabc\r\nVALUE b 0 3\r\n";
    is $p->parse_from_string($input), 0, 'input changed by on_item: the call finishes';
    is $p->parse_from_string("def\r\nEND\r\n"), 1, '... and the next completes';
    is_deeply \%d, { a => "abc\r\n", b => "def\r\n" }, '... with the values sent';
}

{   # A tied destination whose STORE parses again with the same parser.
    package ReenteringHash;
    require Tie::Hash;
    our @ISA = ('Tie::StdHash');
    our ($parser, @errors, $stores);
    sub STORE {
        my ($self, $k, $v) = @_;
        $stores++;
        $self->{$k} = $v;
        push @errors, $@ unless eval { $parser->parse_from_string("VALUE inner 0 1\r\nI\r\n"); 1 };
    }
    package main;

    tie my %d, 'ReenteringHash';
    my $p = $CLASS->new(\%d, 0);
    local $ReenteringHash::parser = $p;
    local @ReenteringHash::errors;
    local $ReenteringHash::stores = 0;
    my $resp = response(map { [ "k$_", "v$_" x 100 ] } 1 .. 20);
    is $p->parse_from_string($resp), 1, "tied STORE re-entering the parser: the outer parse completes";
    is $ReenteringHash::stores, 20, '... every value stored once';
    is scalar(@ReenteringHash::errors), 20, '... each inner call refused';
    like $ReenteringHash::errors[0], qr/called again from perl code that the same parser ran/,
        '... with a clean croak saying why';
    ok !exists $d{inner}, '... and the inner bytes were not parsed';
    is $d{k7}, ('v7' x 100) . "\r\n", '... the values are right';
}

{   # The same STORE without eval: the croak ends the outer parse, cleanly.
    package DyingReentry;
    require Tie::Hash;
    our @ISA = ('Tie::StdHash');
    our $parser;
    sub STORE { $_[0]->{$_[1]} = $_[2]; $parser->parse_from_sock(\*STDIN) }
    package main;

    tie my %d, 'DyingReentry';
    my $p = $CLASS->new(\%d, 0);
    local $DyingReentry::parser = $p;
    ok !eval { $p->parse_from_string(response([ a => 'x' ], [ b => 'y' ])); 1 },
        're-entry without eval: the outer call dies';
    like $@, qr/called again/, '... with the re-entry croak';
    is $p->parse_from_string("END\r\n"), -1, '... and the parser is failed from then on';
    like $p->error, qr/died in perl code/, '... saying why';
}

{   # A STORE that dies: the value it was given is not leaked, the parser fails.
    package DyingStore;
    require Tie::Hash;
    our @ISA = ('Tie::StdHash');
    sub STORE { die "no store\n" }
    package main;

    my $run = sub {
        tie my %d, 'DyingStore';
        my $p = $CLASS->new(\%d, 0, sub { });
        eval { $p->parse_from_string(response([ a => 'x' x 1000 ])) };
        return $@;
    };
    is $run->(), "no store\n", 'a dying STORE: its error comes out';
    no_leaks('... and nothing leaks', $run);
}

{   # A restricted destination refusing a key: a clean croak, nothing leaked.
    my $run = sub {
        my %d = (allowed => undef);
        Hash::Util::lock_keys(%d);
        my $p = $CLASS->new(\%d, 0);
        my $ok = eval { $p->parse_from_string(response([ allowed => 'yes' ], [ other => 'no' ])); 1 };
        return ($ok, $@, $d{allowed});
    };
    my ($ok, $err, $allowed) = $run->();
    ok !$ok, 'restricted hash refusing a key: the parse dies';
    like $err, qr/disallowed key/, '... with perl\'s message';
    is $allowed, "yes\r\n", '... after storing the allowed key';
    no_leaks('... and nothing leaks', sub { $run->() });
}

{   # The DESTROY of a value a store replaces parses again with the same parser.
    package Reenters;
    our ($parser, @errors);
    sub new { bless {}, shift }
    sub DESTROY {
        push @errors, $@ unless eval { $parser->parse_from_string("VALUE d 0 1\r\nD\r\n"); 1 };
    }
    package main;

    my %d = (a => Reenters->new, b => Reenters->new);
    my $p = $CLASS->new(\%d, 0);
    local $Reenters::parser = $p;
    local @Reenters::errors;
    is $p->parse_from_string(response([ a => 'new a' ], [ b => 'new b' ], [ c => 'c' ])), 1,
        'DESTROY of replaced values re-entering the parser: the parse completes';
    is scalar(@Reenters::errors), 2, '... both inner calls refused';
    is_deeply \%d, { a => "new a\r\n", b => "new b\r\n", c => "c\r\n" }, '... the values are right';
}

{   # on_item dies: the batch hash and its entries are not leaked.
    no_leaks('on_item dies: nothing leaks', sub {
        my %d;
        my $p = $CLASS->new(\%d, 0, sub { die "on_item died\n" });
        eval { $p->parse_from_string(response(map { [ "k$_", 'v' ] } 1 .. 10)) };
    });
}

{   # new croaks: nothing allocated is leaked, not even a reference to $dest.
    my %big = map { ($_ => 'x' x 100) } 1 .. 100;
    local $Cache::Memcached::RustXS::Zlib::MaxOutput = -1;
    ok !eval { $CLASS->new(\%big, 0); 1 }, 'new with a negative MaxOutput croaks';
    like $@, qr/MaxOutput must be a size/, '... saying why';
    is Internals::SvREFCNT(%big), 1, '... and keeps no reference to the destination';
    no_leaks('... and leaks nothing', sub { eval { $CLASS->new({}, 0) } });
    {
        package DyingFetch;
        sub TIESCALAR { bless [], shift }
        sub FETCH { die "no fetch\n" }
        package main;
        tie local $Cache::Memcached::RustXS::Zlib::MaxOutput, 'DyingFetch';
        no_leaks('new with a $MaxOutput whose FETCH dies leaks nothing', sub { eval { $CLASS->new({}, 0) } });
    }
}

{   # Get-magic comes before the checks of new's arguments.
    package HoldsRef;
    sub TIESCALAR { my ($class, $v) = @_; bless [$v], $class }
    sub FETCH { $_[0][0] }
    package main;

    my %d;
    tie my $dest, 'HoldsRef', \%d;
    tie my $on_item, 'HoldsRef', sub { };
    my $p = eval { $CLASS->new($dest, 0, $on_item) };
    ok $p, 'new with tied dest and on_item holding references: accepted' or diag $@;
    is $p && $p->parse_from_string(response([ k => 'v' ])), 1, '... and it parses into the hash';
    is $d{k}, "v\r\n", '... the tied-to hash';
}

{   # A tied $MaxOutput is fetched, not ignored.
    package Cap;
    sub TIESCALAR { bless [], shift }
    sub FETCH { 10 }
    package main;

    require Compress::Zlib;
    my $gz = Compress::Zlib::memGzip('0123456789' x 10);
    tie local $Cache::Memcached::RustXS::Zlib::MaxOutput, 'Cap';
    my %d;
    my $p = $CLASS->new(\%d, 0, sub { });
    is $p->parse_from_string("VALUE k 2 " . length($gz) . "\r\n$gz\r\nEND\r\n"), 1,
        'tied MaxOutput of 10: the parse completes';
    ok !exists $d{k}, '... and a value inflating to 100 bytes is dropped (the cap was read)';
}

{   # END\r\n ending exactly on a 64 KiB boundary, with bytes after it.
    my $chunk = 64 * 1024;
    my $head = "VALUE k 0 ";
    my $fill = $chunk - length("END\r\n") - length($head) - length("\r\n") * 2;
    $fill -= length($fill);
    my $resp = "$head$fill\r\n" . ('x' x $fill) . "\r\nEND\r\n";
    is length($resp), $chunk, 'the response is exactly 64 KiB';
    my %d;
    my $p = $CLASS->new(\%d, 0);
    is $p->parse_from_string($resp . "VALUE z 0 1\r\nz\r\n"), -1,
        'bytes after an END on the 64 KiB boundary: -1';
    like $p->error, qr/bytes after END/, '... saying why';
    my $q = $CLASS->new({}, 0);
    is $q->parse_from_string($resp), 1, '... and without them: 1';
}

{   # The reason of a failure.
    my %cases = (
        "SERVER_ERROR out of memory\r\n"   => qr/SERVER_ERROR/,
        "CLIENT_ERROR bad data chunk\r\n"  => qr/CLIENT_ERROR/,
        "ERROR\r\n"                        => qr/replied ERROR/,
        "VALUE k 0 1\r\nAB\r\n"            => qr/not followed by/,
        "HELLO\r\n"                        => qr/unexpected line/,
        "VALUE k x 1\r\n"                  => qr/bad flags, length or cas/,
    );
    for my $resp (sort keys %cases) {
        my $p = $CLASS->new({}, 0);
        is $p->error, undef, 'no error before a failure';
        is $p->parse_from_string($resp), -1, "'" . ($resp =~ /^(\S+)/)[0] . "...': -1";
        like $p->error, $cases{$resp}, '... and error() says why';
    }
    my $ok = $CLASS->new({}, 0);
    $ok->parse_from_string(response([ a => 1 ]));
    is $ok->error, undef, 'no error after a good response';
}

done_testing;
