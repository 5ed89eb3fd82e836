#!/usr/bin/perl
# Every path CONTRIBUTING.md names exists in the tree: the layout's first
# column, any path in the layout's descriptions, and the paths in its
# `code` spans and link targets. A path is a word with a slash whose first
# part is a top-level entry of the tree or which ends in a source file's
# extension; globs must match at least one file, and a test named by its
# number (t/54) is its t/54-*.t. Paths outside the tree
# (../shared/..., /tmp/...) and URLs are not the tree's.
use strict;
use warnings;

use lib 't/lib';
use Test::More;
use CMRXTest::Peers qw(slurp);

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

my @paths = paths_named(slurp('CONTRIBUTING.md'), %top);
ok @paths > 40, scalar(@paths) . ' paths named in CONTRIBUTING.md';
for my $path (@paths) {
    ok exists_under('.', $path), "CONTRIBUTING.md names $path: it exists";
}

done_testing;
