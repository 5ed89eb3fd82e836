#!/usr/bin/perl
# cmrx-dict train --all --server and report --dictionaries --server against
# a real memcached: the server's slab classes, its gzipped values decoded, a
# dictionary per prefix; values written with the set are misses for a stock
# client; report counts the stored values that name each dictionary ID.
# (t/47 runs the same commands on files; a process loads one set here, as
# sets of one folder each give their dictionaries IDs from 1.)
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Spec ();
use File::Temp ();
use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXTest::DictSets qw(corpus_halves run_dict json_of named_by);
use CMRXTest::Memcached;

my $HAVE_JSON = eval { require JSON::PP; 1 };
my $TMP = File::Temp::tempdir(CLEANUP => 1);
my %half = corpus_halves(families => [qw(gh compat)]);    # family => [ [even], [odd] ]

# ---- against memcached ----------------------------------------------------------------------

SKIP: {
    my $server = CMRXTest::Memcached->start_optional;
    skip(CMRXTest::Memcached->unavailable, 1) unless $server;
    skip 'Cache::Memcached::Fast is not installed', 1 unless eval { require Cache::Memcached::Fast; 1 };
    my $addr = $server->address;
    my $plain = Cache::Memcached::Fast->new({ servers => [$addr], compress_threshold => 100 });
    # Each value under 4 keys, gzipped by Fast's default: enough keys for
    # the dictionaries to pay for themselves.
    for my $copy (1 .. 4) {
        $plain->set("$_->[0]:$copy", $_->[1]) for @{ $half{gh}[0] }, @{ $half{compat}[0] };
    }
    my $dir = File::Spec->catfile($TMP, 'server-set');
    my ($st, $out, $err) = run_dict([ 'train', '--all', '--server', $addr, '--out-dir', $dir ]);
    is $st, 0, 'train --all --server: exit 0' or diag $err;
    like $out, qr/memory as memcached's \(stats settings/, "... with the server's slab classes";
    my $s = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir);
    is join(' ', grep { length } $s->prefixes), 'compat: gh:', '... a dictionary for each prefix (their gzip values decoded)'
        or diag $out;
    # Write gh:'s other half with the set, then report.
    my $methods = Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $dir, prefix => 'gh:');
    my $zstd = Cache::Memcached::Fast->new({ servers => [$addr], compress_threshold => 100,
                                             compress_methods => $methods });
    $zstd->set(@$_) or die "set $_->[0] failed\n" for @{ $half{gh}[1] };
    # Values the writer did not compress (it declines data that does not
    # shrink to 0.8) are stored raw: a stock client reads those, and only
    # those.
    my @raw = map { $_->[0] } grep { my ($v, $o) = ($_->[1]); !($methods->[0]->(\$v, \$o) && length $o <= 0.8 * length $v) }
              @{ $half{gh}[1] };
    my $stock = $plain->get_multi(map { $_->[0] } @{ $half{gh}[1] });
    is join(' ', sort keys %$stock), join(' ', sort @raw),
        'a stock Fast sees the values the set compressed as misses';
    my $zstd_stored = @{ $half{gh}[1] } - @raw;
    SKIP: {
        skip 'JSON::PP is needed for --json', 1 unless $HAVE_JSON;
        ($st, $out, $err) = run_dict([ 'report', '--dictionaries', $dir, '--server', $addr, '--json' ]);
        is $st, 0, 'report --dictionaries --server: exit 0' or diag $err;
        my $r = json_of($out);
        my %named = %{ named_by($r) };
        is $named{ $s->current('gh:')->{id} }, $zstd_stored, "... counts the values naming gh:'s ID ($zstd_stored)";
        is join(' ', sort map { $_->{prefix} } @{ $r->{prefixes} }), 'compat: gh:', '... names every prefix';
    }
}

done_testing;
