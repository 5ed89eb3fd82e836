#!/usr/bin/perl
# Every module's SYNOPSIS runs as written (against a real memcached started
# for the test in place of 127.0.0.1:11211), without warnings, and does what
# its comments say.
use strict;
use warnings;
use lib 't/lib';
use Test::More;
use File::Temp qw(tempfile);
use CMRXTest::Clients qw(fast_missing cache_memcached_missing);
use CMRXTest::Memcached;

my $server = CMRXTest::Memcached->start_or_skip;
my $addr   = $server->address;

# What each SYNOPSIS must have achieved, checked after it ran.
my %after = (
    'Cache/Memcached/RustXS.pm' => q{
        $memd->set(k => 'v') && $memd->get('k') eq 'v' or die "Cache::Memcached round trip\n";
        $fast->set(k => 'x' x 5000) && $fast->get('k') eq 'x' x 5000 or die "Fast round trip\n";
    },
    'Cache/Memcached/RustXS/Dict.pm' => q{
        $@->kind eq 'failure' && "$@" eq 'the server closed the connection' or die "the error\n";
    },
    'Cache/Memcached/RustXS/Dict/Server.pm' => q{
        # (not $count > 0: memcached's crawler misses an item the LRU
        # maintainer is moving at that moment, and a few are stored here)
        $count == keys %size_of or die "each_key\n";
        keys %$got == @first or die "get_multi\n";
        $settings->{item_size_max} >= 1024 && $settings->{growth_factor} > 1 or die "settings\n";
        !grep { $_ < 48 } @chunks or die "slab_chunk_sizes\n";
    },
    'Cache/Memcached/RustXS/Dict/Sample.pm' => q{
        use List::Util qw(sum);
        $listing->{keys} == sum(0, map { $_->{keys} } values %{ $listing->{groups} }) or die "list_keys\n";
        $users->{keys} == 10 && @{ $users->{sample} } == 2 or die "the sampler\n";
        !defined $value && $why eq 'gzip that does not decompress' or die "decode_value\n";
    },
    'Cache/Memcached/RustXS/Dict/Measure.pm' => q{
        $m->{values} == 200 && $m->{zstd_dict}{bytes} < $m->{zstd}{bytes} or die "measure_held_out\n";
        $r->{gzip}{bytes} > 0 && $r->{zstd}{bytes} > 0 or die "measure\n";
    },
    'Cache/Memcached/RustXS/Dict/Report.pm' => q{
        $report->{total}{values} == 150 && $report->{prefixes}[0]{prefix} eq 'user' or die "report_data\n";
    },
    'Cache/Memcached/RustXS/Dict/Memory.pm' => q{
        $memory->item_memory(30, 600, 2) == 752 && $memory->item_memory(30, 400, 2) == 600 or die "item_memory\n";
        $memory->resident_items(\@writes) > 100_000 or die "resident_items\n";
    },
    'Cache/Memcached/RustXS/Dict/Tune.pm' => q{
        $tuned->{choice} && $tuned->{choice}{memory} < $tuned->{baseline}{memGzip}{memory} or die "tune\n";
        $fallback->{method} =~ /\A(?:gzip|zstd)\z/ or die "tune_fallback\n";
    },
    'Cache/Memcached/RustXS/Dict/Sets.pm' => q{
        $trained->{set}->current('user:') or die "train_all\n";
        $report->{prefixes}[0]{verdict} or die "report_set\n";
    },
    'Cache/Memcached/RustXS/Dict/CLI.pm' => q{
        $status == 0 or die "main: $status\n";
    },
    'Cache/Memcached/RustXS/GetParser.pm' => q{
        $value eq 'hello' or die "get gave @{[ $value // 'undef' ]}\n";
        $values->{greeting} eq 'hello' && !exists $values->{missing} or die "get_multi\n";
        ref($memd->{parser_class}) || $memd->{parser_class} eq 'Cache::Memcached::RustXS::GetParser' or die "parser_class\n";
    },
    'Cache/Memcached/RustXS/Zstd/DictionarySet.pm' => q{
        $for->{id} == $new->{id} && $for->{prefix} eq 'user:' or die "for_key\n";
        length $bytes > 1000 or die "dictionary_bytes\n";
        my @e = $set->entries;
        @e == 3 && (grep { $_->{state} eq 'retired' } @e) == 1 or die "entries\n";
        Cache::Memcached::RustXS::Zstd::decompress(Cache::Memcached::RustXS::Zstd::compress(
            $users[0], level => 9, dictionary => $new->{id})) eq $users[0] or die "loaded\n";
    },
    'Cache/Memcached/RustXS/Zstd.pm' => q{
        decompress($frame) eq '{"id":7,"name":"user7","plan":"free","tags":["a","b"]}' or die "round trip\n";
        $fast->set(u => 'x' x 500) && $fast->get('u') eq 'x' x 500 or die "Fast\n";
        $memd->set(m => '{"id":1}' x 50) && $memd->get('m') eq '{"id":1}' x 50 or die "Memcached\n";
        $users->set(7, '{"id":7}' x 50) && $users->get(7) eq '{"id":7}' x 50 or die "Fast with the set\n";
        require File::Path; File::Path::rmtree($set->dir);
    },
    'Cache/Memcached/RustXS/Zlib.pm' => q{
        $plain eq $json && $back eq $json or die "round trips\n";
        substr($gz, 0, 2) eq "\x1f\x8b" or die "not gzip\n";
        !Cache::Memcached::RustXS::Zlib::compress_zlib_overridden() or die "still overridden\n";
        $fast->set(j => $json) && $fast->get('j') eq $json or die "Fast with compress_methods\n";
        $memd->set(m => $json) && $memd->get('m') eq $json or die "Cache::Memcached\n";
    },
);

for my $module (sort keys %after) {
    my $file = "perl/lib/$module";
    open my $fh, '<', $file or die "$file: $!";
    my $pod = do { local $/; <$fh> };
    my ($synopsis) = $pod =~ /^=head1 SYNOPSIS\n(.*?)^=head1 /ms;
    ok defined $synopsis && $synopsis =~ /\S/, "$module has a SYNOPSIS" or next;
    $synopsis =~ s/^    //mg;    # verbatim paragraphs are indented by four
    my $count = $synopsis =~ s/127\.0\.0\.1:11211/$addr/g;
  SKIP: {
        # Cache::Memcached::RustXS::Memcached is a Cache::Memcached.
        my @absent = grep { $synopsis =~ $_->[1] && $_->[2] }
            [ 'Cache::Memcached', qr/^\s*use Cache::Memcached(?:::RustXS::Memcached)?\s*;/m, cache_memcached_missing() ],
            [ 'Cache::Memcached::Fast', qr/^\s*use Cache::Memcached::Fast\s*;/m, fast_missing() ];
        skip "$module: its SYNOPSIS uses $absent[0][0]: $absent[0][2]", 3 if @absent;

        my ($tmp, $path) = tempfile(SUFFIX => '.pl', UNLINK => 1);
        print {$tmp} "use strict;\nuse warnings FATAL => 'all';\n$synopsis\n$after{$module}\nprint \"SYNOPSIS OK\\n\";\n";
        close $tmp;
        my $out = `"$^X" -Mblib "$path" 2>&1`;
        is $?, 0, "$module: SYNOPSIS runs (with $count server address(es) set to the test's)"
            or diag $out;
        like $out, qr/SYNOPSIS OK/, "$module: and does what it says";
        unlike $out, qr/warn|uninitialized|deprecated/i, "$module: without warnings";
  }
}

done_testing;
