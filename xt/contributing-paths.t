#!/usr/bin/perl
# CONTRIBUTING.md and the tree agree both ways. Every path it names exists:
# the layout's first column, any path in the layout's descriptions, and the
# paths in its `code` spans and link targets (a path is a word with a slash
# whose first part is a top-level entry of the tree or which ends in a
# source file's extension; globs must match at least one file, and a test
# named by its number (t/54) is its t/54-*.t; paths outside the tree,
# ../shared/... and /tmp/..., and URLs are not the tree's). And every file
# of the tree (git ls-files) is described: named there, matched by a glob
# it names, a module its layout names (::Dict::Tune is
# lib/Cache/Memcached/RustXS/Dict/Tune.pm), or inside one of the data
# folders below, which it names and whose files are data, not code.
use strict;
use warnings;

use lib 't/lib';
use Test::More;
use CMRXTest::Peers qw(slurp);

# Folders of data, described as a whole: seeds, corpus files, fixtures.
my @DATA_FOLDERS = qw(fuzz/seeds/ bench/data/values/ t/data/);

my $EXTENSION = qr/\.(?:rs|h|c|xs|pm|pl|t|pod|PL|toml|lock|md|json|svg|supp)\z/;

# The top-level entries of the tree at $root.
sub top_level {
    my ($root) = @_;
    opendir my $dh, $root or die "$root: $!";
    return map { ($_ => 1) } grep { !/\A\.\.?\z/ } readdir $dh;
}

# The paths $markdown names, each once, in the order they come.
sub paths_named {
    my ($markdown, %top) = @_;
    my @words;
    while ($markdown =~ /^```(\w*)\n(.*?)^```/msg) {
        my ($language, $block) = ($1, $2);
        if ($language ne '') {    # commands
            push @words, map { [ $_, 0 ] } split /\s+/, $block;
            next;
        }
        for my $line (split /\n/, $block) {    # the layout
            my ($first, $rest) = $line =~ /\A(\S.*?)(?:\s{2,}(.*))?\z/ ? ($1, $2) : ('', $line);
            push @words, map { [ $_, 1 ] } grep { length } split /,\s*/, $first;    # the first column
            push @words, map { [ $_, 0 ] } split /[\s,;()]+/, $rest // '';
        }
    }
    (my $prose = $markdown) =~ s/^```\w*\n.*?^```//msg;
    push @words, map { [ $_, 0 ] } map { split /\s+/ } $prose =~ /`([^`]+)`/g;
    push @words, map { [ $_, 1 ] } $prose =~ /\]\(([^)#]+)(?:#[^)]*)?\)/g;    # links
    my (%seen, @paths);
    for (@words) {
        my ($word, $listed) = @$_;
        $word =~ s/\A\w+=//;    # VAR=path
        $word =~ s/['"]//g;
        $word =~ s/[.:;,]+\z// unless $word =~ $EXTENSION;
        next if $word eq '' || $word =~ m{\A(?:\.\./|/|https?:)};
        my ($first_part) = $word =~ m{\A([^/]+)/};
        my $is_path = $listed
            || (defined $first_part && ($top{$first_part} || $word =~ $EXTENSION));
        push @paths, $word if $is_path && !$seen{$word}++;
    }
    return @paths;
}

# Whether $path (maybe a glob) names something under $root.
# A test named by its number (t/54) is the file t/54-*.t.
sub exists_under {
    my ($root, $path) = @_;
    $path =~ s{\A(x?t/\d\d)\z}{$1-*.t};
    return scalar(() = glob("$root/$path")) && -e (glob("$root/$path"))[0] if $path =~ /[*?]/;
    return -e "$root/$path";
}


# (a, b, c, d) as ([a, b], [c, d]).
sub pairs_of { my @list = @_; return map { [ @list[ 2 * $_, 2 * $_ + 1 ] ] } 0 .. $#list / 2 }

# A glob of the tree (*, ? and [...]) as a regex for a path.
sub glob_regex {
    my ($glob) = @_;
    my $re = join '', map { $_ eq '*' ? '[^/]*' : $_ eq '?' ? '[^/]' : /\A\[/ ? $_ : quotemeta } $glob =~ /(\[[^\]]*\]|\*|\?|[^*?\[]+)/g;
    return qr/\A$re\z/;
}

# The module files the layout names by their Perl names in its lib/ line
# (Cache::Memcached::RustXS::Zstd, ::Dict::Tune, the .pod names beside).
sub modules_named {
    my ($markdown) = @_;
    my ($lib) = map { /^(lib\/ .*?)(?=^\S|\z)/ms } map { $_->[0] eq '' ? $_->[1] : () }
        pairs_of($markdown =~ /^```(\w*)\n(.*?)^```/msg);
    return unless defined $lib;
    my @files = map { my $m = $_; $m =~ s/\A::/Cache::Memcached::RustXS::/; $m =~ s{::}{/}g; "lib/$m.pm" }
        $lib =~ /((?:Cache::Memcached::RustXS)?(?:::\w+)+|Cache::Memcached::RustXS)\b/g;
    push @files, map { m{/} ? "lib/$_" : $_ eq 'cmrx-dict.pod' ? "lib/$_" : "lib/Cache/Memcached/RustXS/$_" }
        $lib =~ /([\w-]+\.pod)\b/g;
    return @files;
}

# The files of @files that $markdown does not describe.
sub undescribed {
    my ($markdown, $top, @files) = @_;
    my @named = paths_named($markdown, %$top);
    my %exact = map { ($_ => 1) } @named, modules_named($markdown);
    my @globs = map { glob_regex($_) } grep { /[*?\[]/ } @named;
    my %named_folder = map { ($_ => 1) } grep { m{/\z} } @named;
    my @data = grep { $named_folder{$_} } @DATA_FOLDERS;
    return grep {
        my $file = $_;
        !$exact{$file} && !grep({ $file =~ $_ } @globs) && !grep({ index($file, $_) == 0 } @data)
    } @files;
}

my %top = top_level('.');

# The check finds what it should: a planted layout line, a description's
# path, a code span and a link whose files do not exist; and it leaves
# alone words that are not paths of the tree.
{
    my $planted = "```\nrust/nothing.rs         wrapped by rust/gone/inner.rs\n"
        . "Cargo.toml               gzip/zlib, read(2), I/O\n```\n"
        . "Run `prove -b t/99-none.t` and `make`; see [it](xt/none.md), "
        . "[the README](README.md), `../shared/perls`, `/tmp/x`, <https://example.org/a/b>.\n";
    my @named = paths_named($planted, %top);
    is_deeply \@named, [qw(rust/nothing.rs rust/gone/inner.rs Cargo.toml t/99-none.t xt/none.md README.md)],
        'a planted text: its paths, and no other words';
    is_deeply [ grep { !exists_under('.', $_) } @named ],
        [qw(rust/nothing.rs rust/gone/inner.rs t/99-none.t xt/none.md)], '... the missing ones found';
}

# ... and it finds the files a text leaves out: a file that no line names,
# a file in a folder that is named but is not a data folder, and none that
# a glob, a module name or a data folder covers.
{
    my $planted = "```\nlib/                     ::Zlib, ::Dict::Tune; cmrx-dict.pod\n"
        . "t/[0-9][0-9]-*.t         the tests\nfuzz/seeds/              seeds\nrust/                    the engine\n```\n";
    my @files = qw(lib/Cache/Memcached/RustXS/Zlib.pm lib/Cache/Memcached/RustXS/Dict/Tune.pm lib/cmrx-dict.pod
                   lib/Cache/Memcached/RustXS/Zstd.pm t/05-synopsis.t t/lib/CMRXTest/Raw.pm fuzz/seeds/sniff/png
                   rust/lib.rs);
    is_deeply [ undescribed($planted, \%top, @files) ],
        [qw(lib/Cache/Memcached/RustXS/Zstd.pm t/lib/CMRXTest/Raw.pm rust/lib.rs)],
        'a planted text: the files it leaves out found';
}

my $contributing = slurp('CONTRIBUTING.md');
my @tree = grep { length } split /\n/, `git ls-files`;
SKIP: {
    skip 'not a git checkout: no list of the tree\'s files', 1 unless @tree;
    my @left_out = undescribed($contributing, \%top, @tree);
    is scalar(@left_out), 0, 'CONTRIBUTING.md describes every file of the tree (git ls-files)'
        or diag join "\n", 'not described:', @left_out;
}

my @paths = paths_named($contributing, %top);
ok @paths > 40, scalar(@paths) . ' paths named in CONTRIBUTING.md';
for my $path (@paths) {
    ok exists_under('.', $path), "CONTRIBUTING.md names $path: it exists";
}

done_testing;
