#!/usr/bin/perl
# Keys as memcached has them: it stores any byte in a key but NUL, space and
# LF (a tab, control bytes, CR, DEL and bytes >= 0x80 included), and
# Cache::Memcached does not check keys. Such keys, set through a raw socket,
# must all come back through get_multi with the parser, together with the
# other keys of that server, as they do with Cache::Memcached::Fast.
use strict;
use warnings;

use lib 't/lib';
use Test::More;

use Cache::Memcached::RustXS::GetParser;
use CMRXTest::Clients qw(fast_missing cache_memcached_missing);
use CMRXTest::Memcached;
use CMRXTest::Raw qw(raw_set raw_get);

my $server = CMRXTest::Memcached->start_or_skip;
my $addr = $server->address;

my @bytes = grep { $_ != 0x00 && $_ != 0x20 && $_ != 0x0a } 0 .. 255;
is scalar(@bytes), 253, '253 bytes memcached accepts in a key';
my %want;
for my $b (@bytes) {
    my $c = chr $b;
    $want{"k$c"} = "value of byte $b";                 # at the end
    $want{"${c}m$c$c"} = "byte $b at the start";       # at the start, twice inside
}
$want{ join '', map { chr } grep { $_ < 0x80 } @bytes } = 'every low byte in one key';
$want{"plain$_"} = "plain value $_" for 1 .. 20;       # the other keys of the server

my $stored = grep { raw_set($addr, $_, 0, $want{$_}) } sort keys %want;
is $stored, scalar(keys %want), 'memcached stored every key';
is_deeply [ raw_get($addr, "k\x01") ], [ 0, 'value of byte 1' ], '... and returns them';

SKIP: {
    skip cache_memcached_missing(), 6 if cache_memcached_missing();
    my $memd = Cache::Memcached->new({
        servers => [$addr], parser_class => 'Cache::Memcached::RustXS::GetParser', select_timeout => 5,
    });
    my $got = $memd->get_multi(sort keys %want);
    is scalar(keys %$got), scalar(keys %want), 'get_multi with our parser: every key comes back';
    is_deeply $got, \%want, '... each with its value';
    my @missed = grep { !exists $got->{$_} } sort keys %want;
    ok !@missed, '... none missed' or diag 'missed: ' . join ' ', map { unpack 'H*', $_ } @missed[0 .. 4];

    is $memd->get("k\x7f"), 'value of byte 127', 'get of a key ending in DEL';
    is $memd->get("k\r"), 'value of byte 13', 'get of a key ending in CR';
    is $memd->get("k\t"), 'value of byte 9', 'get of a key ending in a tab';
}

SKIP: {
    my $why = fast_missing();
    skip $why, 1 if $why;
    my $fast = Cache::Memcached::Fast->new({ servers => [$addr] });
    is_deeply $fast->get_multi(sort keys %want), \%want, 'Cache::Memcached::Fast returns the same';
}

done_testing;
