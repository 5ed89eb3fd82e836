#!/usr/bin/perl
# Every module's SYNOPSIS runs as written (against a real memcached started
# for the test in place of 127.0.0.1:11211), without warnings, and does what
# its comments say.
use strict;
use warnings;
use lib 't/lib';
use Test::More;
use File::Temp qw(tempfile);
use CMRXTest::Clients qw(fast_missing);
use CMRXTest::Memcached;

my $server = CMRXTest::Memcached->start_or_skip;
my $addr   = $server->address;

# What each SYNOPSIS must have achieved, checked after it ran.
my %after = (
    'Cache/Memcached/RustXS.pm' => q{
        $memd->set(k => 'v') && $memd->get('k') eq 'v' or die "Cache::Memcached round trip\n";
        $fast->set(k => 'x' x 5000) && $fast->get('k') eq 'x' x 5000 or die "Fast round trip\n";
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
        skip "$module: its SYNOPSIS uses Cache::Memcached::Fast: " . fast_missing(), 3
            if fast_missing() && $synopsis =~ /^\s*use Cache::Memcached::Fast\b/m;

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
